"""Repack the model with its inference code (code/) and optional calibration (calibration/) into model.tar.gz."""
import os
import shutil
import tarfile
import tempfile

# Python 3.11.4+ (and 3.8.17+) can refuse unsafe archive members; older ones cannot.
SAFE_EXTRACT = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}

MODEL_INPUT = "/opt/ml/processing/input/model"
SCRIPT_INPUT = "/opt/ml/processing/input/script"
CALIBRATION_INPUT = "/opt/ml/processing/input/calibration"
OUTPUT = "/opt/ml/processing/output"


def copy_tree(src, dst):
    if src and os.path.isdir(src):
        shutil.copytree(src, dst, dirs_exist_ok=True)


def main(input_paths, output_paths, environ_vars, job_args):
    with tempfile.TemporaryDirectory() as work:
        model_dir = input_paths["model_input"]
        archive = os.path.join(model_dir, "model.tar.gz")
        if os.path.exists(archive):
            with tarfile.open(archive) as tar:
                tar.extractall(work, **SAFE_EXTRACT)
        else:
            copy_tree(model_dir, work)
        copy_tree(input_paths.get("inference_scripts_input"), os.path.join(work, "code"))
        copy_tree(input_paths.get("calibration_model"), os.path.join(work, "calibration"))
        os.makedirs(output_paths["packaged_model"], exist_ok=True)
        with tarfile.open(os.path.join(output_paths["packaged_model"], "model.tar.gz"), "w:gz") as tar:
            for name in sorted(os.listdir(work)):
                tar.add(os.path.join(work, name), arcname=name)


if __name__ == "__main__":
    main(
        {"model_input": MODEL_INPUT, "inference_scripts_input": SCRIPT_INPUT, "calibration_model": CALIBRATION_INPUT},
        {"packaged_model": OUTPUT},
        {},
        None,
    )
