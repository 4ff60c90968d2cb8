"""Repack a trained model archive with its inference code.

Runs as a SageMaker training job in script mode (scikit-learn image), the
step the compiler adds where the SageMaker Python SDK adds its model
repack. It reads:

- the model archive from the ``training`` channel
  (/opt/ml/input/data/training/, a ``model.tar.gz``);
- the inference code from the ``code`` channel
  (/opt/ml/input/data/code/, the ``sourcedir.tar.gz`` of the model step).

It writes the archive's files plus the code under ``code/`` to
/opt/ml/model, which SageMaker uploads as the job's model.tar.gz. Serving
containers (PyTorch, and XGBoost with SAGEMAKER_SUBMIT_DIRECTORY
/opt/ml/model/code) import the handler from that ``code/`` folder.
"""
import argparse
import os
import shutil
import tarfile

INPUT_DIR = "/opt/ml/input/data"
MODEL_DIR = "/opt/ml/model"


def find_archive(folder, name):
    """Return the archive `name` in folder, else its only .tar.gz file."""
    candidate = os.path.join(folder, name)
    if name and os.path.isfile(candidate):
        return candidate
    archives = sorted(f for f in os.listdir(folder) if f.endswith(".tar.gz"))
    if len(archives) != 1:
        raise FileNotFoundError(f"expected one .tar.gz in {folder}, found {archives}")
    return os.path.join(folder, archives[0])


def safe_extract(archive, dest):
    """Extract archive into dest, refusing members that leave dest."""
    root = os.path.realpath(dest)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            target = os.path.realpath(os.path.join(dest, member.name))
            if target != root and not target.startswith(root + os.sep):
                raise ValueError(f"{archive}: member {member.name} leaves {dest}")
            if member.issym() or member.islnk():
                raise ValueError(f"{archive}: links are not repacked ({member.name})")
        tar.extractall(dest)


def repack(input_dir, model_dir, model_archive, inference_script):
    """Unpack the model into model_dir and put the inference code in code/."""
    os.makedirs(model_dir, exist_ok=True)
    safe_extract(find_archive(os.path.join(input_dir, "training"), model_archive), model_dir)
    code_dir = os.path.join(model_dir, "code")
    if os.path.isdir(code_dir):
        shutil.rmtree(code_dir)
    os.makedirs(code_dir)
    safe_extract(find_archive(os.path.join(input_dir, "code"), "sourcedir.tar.gz"), code_dir)
    if not os.path.isfile(os.path.join(code_dir, inference_script)):
        raise FileNotFoundError(f"inference script {inference_script} is not in the model's code")
    print(f"repacked {model_archive} with code/{inference_script} into {model_dir}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--inference_script", default="inference.py")
    parser.add_argument("--model_archive", default="model.tar.gz")
    args, _ = parser.parse_known_args()
    repack(INPUT_DIR, MODEL_DIR, args.model_archive, args.inference_script)
