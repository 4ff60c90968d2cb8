"""Bring a pretrained model into the pipeline.

Reads the model archive from pretrained_model_path (/opt/ml/processing/input/model: a model.tar.gz, or the
only *.tar.gz there), checks that it is a gzip'd tar whose members stay inside the archive (no absolute
paths, no "..", no links) and holds at least one file, and writes it to model_output
(/opt/ml/processing/output/model/model.tar.gz). When the optional hyperparameters input
(/opt/ml/processing/input/config) holds hyperparameters.json, the archive is rewritten with that file added
at its top (replacing one already there).
"""
import io
import os
import shutil
import tarfile

INPUT_PATHS = {"pretrained_model_path": "/opt/ml/processing/input/model",
               "hyperparameters_s3_uri": "/opt/ml/processing/input/config"}
OUTPUT_PATHS = {"model_output": "/opt/ml/processing/output/model"}
ARCHIVE = "model.tar.gz"
HYPERPARAMETERS = "hyperparameters.json"


def find_archive(path):
    if os.path.isfile(path):
        return path
    if os.path.isfile(os.path.join(path, ARCHIVE)):
        return os.path.join(path, ARCHIVE)
    found = []
    for root, dirs, files in os.walk(path):
        found += [os.path.join(root, f) for f in files if f.endswith(".tar.gz")]
    if len(found) != 1:
        raise SystemExit(f"expected {ARCHIVE} (or exactly one .tar.gz) under {path}, found {len(found)}: "
                         "point pretrained_model_path at the model archive")
    return found[0]


def check(archive):
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()
    except (tarfile.TarError, OSError, EOFError) as e:
        raise SystemExit(f"{archive} is not a gzip'd tar archive: {e}")
    for m in members:
        name = m.name
        if name.startswith("/") or ".." in name.split("/") or not (m.isfile() or m.isdir()):
            raise SystemExit(f"{archive}: member {name!r} is not a plain file or folder inside the archive")
    files = [m.name for m in members if m.isfile()]
    if not files:
        raise SystemExit(f"{archive} holds no file")
    return files


def find_hyperparameters(path):
    for root, dirs, files in os.walk(path or ""):
        if HYPERPARAMETERS in files:
            return os.path.join(root, HYPERPARAMETERS)
    return None


def main(input_paths, output_paths, environ_vars, job_args):
    archive = find_archive(input_paths["pretrained_model_path"])
    files = check(archive)
    out_dir = output_paths["model_output"]
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, ARCHIVE)
    hyperparameters = find_hyperparameters(input_paths.get("hyperparameters_s3_uri"))
    if hyperparameters is None:
        shutil.copyfile(archive, target)
        print(f"copied {archive} ({len(files)} files)")
        return
    with open(hyperparameters, "rb") as f:
        extra = f.read()
    with tarfile.open(archive, "r:gz") as src, tarfile.open(target, "w:gz") as dst:
        for m in src.getmembers():
            if m.name.removeprefix("./") == HYPERPARAMETERS:
                continue
            dst.addfile(m, src.extractfile(m) if m.isfile() else None)
        info = tarfile.TarInfo(HYPERPARAMETERS)
        info.size = len(extra)
        dst.addfile(info, io.BytesIO(extra))
    print(f"repacked {archive} ({len(files)} files) with {HYPERPARAMETERS}")


if __name__ == "__main__":
    main(INPUT_PATHS, OUTPUT_PATHS, {}, None)
