"""TabularPreprocessing step script, scaffolded by cursus project.init.

Contract: Reads raw data shards, drops rows without a label, casts the label, splits by job type and writes processed_data/<split>/

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
    "metadata": "/opt/ml/processing/input/metadata",
    "signature": "/opt/ml/processing/input/signature",
}
CONTAINER_OUTPUTS = {
    "processed_data": "/opt/ml/processing/output",
}
REQUIRED_ENV = ["LABEL_FIELD"]
OPTIONAL_ENV = {
    "TRAIN_RATIO": "0.7",
    "TEST_VAL_RATIO": "0.5",
    "OUTPUT_FORMAT": "CSV",
    "CATEGORICAL_COLUMNS": "",
    "NUMERICAL_COLUMNS": "",
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
    # TODO: implement TabularPreprocessing.
    inputs = {}
    inputs["input_data"] = _list_files(input_paths["input_data"])
    inputs["metadata"] = _list_files(input_paths.get("metadata"))
    inputs["signature"] = _list_files(input_paths.get("signature"))
    settings = {}
    settings["LABEL_FIELD"] = environ_vars["LABEL_FIELD"]
    settings["TRAIN_RATIO"] = environ_vars.get("TRAIN_RATIO", "0.7")
    settings["TEST_VAL_RATIO"] = environ_vars.get("TEST_VAL_RATIO", "0.5")
    settings["OUTPUT_FORMAT"] = environ_vars.get("OUTPUT_FORMAT", "CSV")
    settings["CATEGORICAL_COLUMNS"] = environ_vars.get("CATEGORICAL_COLUMNS", "")
    settings["NUMERICAL_COLUMNS"] = environ_vars.get("NUMERICAL_COLUMNS", "")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "TabularPreprocessing", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["processed_data"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="TabularPreprocessing step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
