"""XGBoostTraining step script, scaffolded by cursus project.init.

Contract: Reads train/val/test channels and hyperparameters.json, trains, writes the model to /opt/ml/model and predictions to /opt/ml/output/data

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
    "hyperparameters_s3_uri": "/opt/ml/code/hyperparams/hyperparameters.json",
}
CONTAINER_OUTPUTS = {
    "model_output": "/opt/ml/model",
    "evaluation_output": "/opt/ml/output/data",
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
    # TODO: implement XGBoostTraining.
    inputs = {}
    inputs["input_path"] = _list_files(input_paths["input_path"])
    inputs["hyperparameters_s3_uri"] = _list_files(input_paths.get("hyperparameters_s3_uri"))
    settings = {}
    settings["REGION"] = environ_vars.get("REGION", "NA")
    arguments = {}
    manifest = {"step": "XGBoostTraining", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["model_output"], manifest)
    _write_manifest(output_paths["evaluation_output"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="XGBoostTraining step")
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
