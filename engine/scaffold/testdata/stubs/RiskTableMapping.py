"""RiskTableMapping step script, scaffolded by cursus project.init.

Contract: Fits (training) or loads risk tables for the categorical fields and maps every split

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
    "hyperparameters_s3_uri": "/opt/ml/processing/input/config",
    "risk_tables": "/opt/ml/processing/input/risk_tables",
}
CONTAINER_OUTPUTS = {
    "processed_data": "/opt/ml/processing/output/data",
    "risk_tables": "/opt/ml/processing/output/risk_tables",
}
REQUIRED_ENV = ["LABEL_FIELD"]
OPTIONAL_ENV = {
    "SMOOTH_FACTOR": "0.01",
    "COUNT_THRESHOLD": "5",
    "CAT_FIELD_LIST": "",
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
    # TODO: implement RiskTableMapping.
    inputs = {}
    inputs["input_data"] = _list_files(input_paths["input_data"])
    inputs["hyperparameters_s3_uri"] = _list_files(input_paths.get("hyperparameters_s3_uri"))
    inputs["risk_tables"] = _list_files(input_paths.get("risk_tables"))
    settings = {}
    settings["LABEL_FIELD"] = environ_vars["LABEL_FIELD"]
    settings["SMOOTH_FACTOR"] = environ_vars.get("SMOOTH_FACTOR", "0.01")
    settings["COUNT_THRESHOLD"] = environ_vars.get("COUNT_THRESHOLD", "5")
    settings["CAT_FIELD_LIST"] = environ_vars.get("CAT_FIELD_LIST", "")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "RiskTableMapping", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["processed_data"], manifest)
    _write_manifest(output_paths["risk_tables"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="RiskTableMapping step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
