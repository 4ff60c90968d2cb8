"""FeatureSelection step script, scaffolded by cursus project.init.

Contract: Training selects features by ensemble voting; other job types apply the saved selection

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
    "selected_features": "/opt/ml/processing/input/selected_features",
}
CONTAINER_OUTPUTS = {
    "processed_data": "/opt/ml/processing/output/data",
    "selected_features": "/opt/ml/processing/output/selected_features",
}
REQUIRED_ENV = ["LABEL_FIELD"]
OPTIONAL_ENV = {
    "FEATURE_SELECTION_METHODS": "variance,correlation,mutual_info,rfe",
    "N_FEATURES_TO_SELECT": "50",
    "CORRELATION_THRESHOLD": "0.95",
    "VARIANCE_THRESHOLD": "0.01",
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
    # TODO: implement FeatureSelection.
    inputs = {}
    inputs["input_data"] = _list_files(input_paths["input_data"])
    inputs["selected_features"] = _list_files(input_paths.get("selected_features"))
    settings = {}
    settings["LABEL_FIELD"] = environ_vars["LABEL_FIELD"]
    settings["FEATURE_SELECTION_METHODS"] = environ_vars.get("FEATURE_SELECTION_METHODS", "variance,correlation,mutual_info,rfe")
    settings["N_FEATURES_TO_SELECT"] = environ_vars.get("N_FEATURES_TO_SELECT", "50")
    settings["CORRELATION_THRESHOLD"] = environ_vars.get("CORRELATION_THRESHOLD", "0.95")
    settings["VARIANCE_THRESHOLD"] = environ_vars.get("VARIANCE_THRESHOLD", "0.01")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "FeatureSelection", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["processed_data"], manifest)
    _write_manifest(output_paths["selected_features"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="FeatureSelection step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
