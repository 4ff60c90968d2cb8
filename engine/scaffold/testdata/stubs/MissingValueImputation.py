"""MissingValueImputation step script, scaffolded by cursus project.init.

Contract: Fits (training) or loads (other job types) per-column fill values and applies them

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
    "input_data": "/opt/ml/processing/input/data",
    "imputation_params": "/opt/ml/processing/input/imputation_params",
}
CONTAINER_OUTPUTS = {
    "processed_data": "/opt/ml/processing/output/data",
    "imputation_params": "/opt/ml/processing/output/imputation_params",
}
REQUIRED_ENV = ["LABEL_FIELD"]
OPTIONAL_ENV = {
    "DEFAULT_NUMERICAL_STRATEGY": "mean",
    "DEFAULT_CATEGORICAL_STRATEGY": "mode",
    "DEFAULT_TEXT_STRATEGY": "mode",
    "CATEGORICAL_CONSTANT_VALUE": "Unknown",
    "EXCLUDE_COLUMNS": "",
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
    # TODO: implement MissingValueImputation.
    inputs = {}
    inputs["input_data"] = _list_files(input_paths["input_data"])
    inputs["imputation_params"] = _list_files(input_paths.get("imputation_params"))
    settings = {}
    settings["LABEL_FIELD"] = environ_vars["LABEL_FIELD"]
    settings["DEFAULT_NUMERICAL_STRATEGY"] = environ_vars.get("DEFAULT_NUMERICAL_STRATEGY", "mean")
    settings["DEFAULT_CATEGORICAL_STRATEGY"] = environ_vars.get("DEFAULT_CATEGORICAL_STRATEGY", "mode")
    settings["DEFAULT_TEXT_STRATEGY"] = environ_vars.get("DEFAULT_TEXT_STRATEGY", "mode")
    settings["CATEGORICAL_CONSTANT_VALUE"] = environ_vars.get("CATEGORICAL_CONSTANT_VALUE", "Unknown")
    settings["EXCLUDE_COLUMNS"] = environ_vars.get("EXCLUDE_COLUMNS", "")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "MissingValueImputation", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["processed_data"], manifest)
    _write_manifest(output_paths["imputation_params"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="MissingValueImputation step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
