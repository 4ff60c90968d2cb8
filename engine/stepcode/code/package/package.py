"""Package a trained model for deployment: model files + code/ + calibration/ in one model.tar.gz.

Reads: model_input (/opt/ml/processing/input/model): a training job's model.tar.gz (or its files), whose
code/ (the built-in trainers write inference.py and its helper there) is kept; inference_scripts_input
(optional, /opt/ml/processing/input/script): files copied into code/, replacing same-named ones;
calibration_model (optional, /opt/ml/processing/input/calibration): a calibration step's output, copied
into calibration/ (the built-in serving handlers apply calibration/calibration.json).
Writes: packaged_model (/opt/ml/processing/output): model.tar.gz.
"""
import os
import shutil
import tarfile
import tempfile


def extract(archive, dest):
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            name = os.path.normpath(member.name)
            if name.startswith(("/", "..")) or not (member.isfile() or member.isdir()):
                raise SystemExit("unsafe member %r in %s" % (member.name, archive))
        tar.extractall(dest)


def copy_tree(src, dst):
    """Copy the files under src into dst, unpacking a model.tar.gz found there; False when src is empty."""
    if not src or not os.path.isdir(src) or not os.listdir(src):
        return False
    for root, _, names in os.walk(src):
        for name in names:
            path = os.path.join(root, name)
            target = os.path.join(dst, os.path.relpath(path, src))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if name == "model.tar.gz":
                extract(path, os.path.dirname(target))
            else:
                shutil.copy(path, target)
    return True


def main(input_paths, output_paths, environ_vars, job_args):
    with tempfile.TemporaryDirectory() as work:
        model_input = input_paths["model_input"]
        if os.path.isfile(model_input):
            extract(model_input, work)
        elif not copy_tree(model_input, work):
            raise SystemExit("no model files under %s" % model_input)
        if copy_tree(input_paths.get("inference_scripts_input"), os.path.join(work, "code")):
            print("inference scripts copied into code/")
        if copy_tree(input_paths.get("calibration_model"), os.path.join(work, "calibration")):
            print("calibration copied into calibration/")
        if not os.path.isfile(os.path.join(work, "code", "inference.py")):
            print("note: the package has no code/inference.py; a framework image serving through code will not load it")
        os.makedirs(output_paths["packaged_model"], exist_ok=True)
        target = os.path.join(output_paths["packaged_model"], "model.tar.gz")
        with tarfile.open(target, "w:gz") as tar:
            for name in sorted(os.listdir(work)):
                tar.add(os.path.join(work, name), arcname=name)
        with tarfile.open(target) as tar:
            names = sorted(tar.getnames())
    print("model.tar.gz: %s" % ", ".join(names))
    return {"files": names}


if __name__ == "__main__":
    main({"model_input": "/opt/ml/processing/input/model",
          "inference_scripts_input": "/opt/ml/processing/input/script",
          "calibration_model": "/opt/ml/processing/input/calibration"},
         {"packaged_model": "/opt/ml/processing/output"}, {}, None)
