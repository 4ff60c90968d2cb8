"""PyTorchTuning step script, scaffolded by cursus project.init.

Contract: The PyTorch training script; each trial receives the tuned hyperparameters as command-line values and must log the objective metric

TODO: replace the body of main() with the step's logic. Keep the signature
main(input_paths, output_paths, environ_vars, job_args): cursus validates it
against the step contract and validate.run_scripts calls it directly.
"""
import argparse
import json
import os
import sys

# Container paths declared by the step contract.
CONTAINER_INPUTS = {
    "input_path": "/opt/ml/input/data",
}
CONTAINER_OUTPUTS = {
    "best_model": "/opt/ml/model",
}
REQUIRED_ENV = []
OPTIONAL_ENV = {
    "REGION": "NA",
}


def _list_files(path):
    """Relative paths of the files under path (empty when absent)."""
    if not path or not os.path.isdir(path):
        return []
    found = []
    for root, _dirs, files in os.walk(path):
        for name in files:
            found.append(os.path.relpath(os.path.join(root, name), path))
    return sorted(found)


def _write_manifest(path, manifest):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "_cursus_stub_manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)


def main(input_paths, output_paths, environ_vars, job_args):
    # TODO: implement PyTorchTuning.
    inputs = {}
    inputs["input_path"] = _list_files(input_paths["input_path"])
    settings = {}
    settings["REGION"] = environ_vars.get("REGION", "NA")
    arguments = {}
    manifest = {"step": "PyTorchTuning", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["best_model"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="PyTorchTuning step")
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
