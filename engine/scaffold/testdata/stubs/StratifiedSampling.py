"""StratifiedSampling step script, scaffolded by cursus project.init.

Contract: Samples each stratum of strata_column to the target size and keeps the split folders

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
}
CONTAINER_OUTPUTS = {
    "processed_data": "/opt/ml/processing/output",
}
REQUIRED_ENV = ["STRATA_COLUMN"]
OPTIONAL_ENV = {
    "SAMPLING_STRATEGY": "balanced",
    "TARGET_SAMPLE_SIZE": "1000",
    "MIN_SAMPLES_PER_STRATUM": "10",
    "VARIANCE_COLUMN": "",
    "RANDOM_STATE": "42",
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
    # TODO: implement StratifiedSampling.
    inputs = {}
    inputs["input_data"] = _list_files(input_paths["input_data"])
    settings = {}
    settings["STRATA_COLUMN"] = environ_vars["STRATA_COLUMN"]
    settings["SAMPLING_STRATEGY"] = environ_vars.get("SAMPLING_STRATEGY", "balanced")
    settings["TARGET_SAMPLE_SIZE"] = environ_vars.get("TARGET_SAMPLE_SIZE", "1000")
    settings["MIN_SAMPLES_PER_STRATUM"] = environ_vars.get("MIN_SAMPLES_PER_STRATUM", "10")
    settings["VARIANCE_COLUMN"] = environ_vars.get("VARIANCE_COLUMN", "")
    settings["RANDOM_STATE"] = environ_vars.get("RANDOM_STATE", "42")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "StratifiedSampling", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["processed_data"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="StratifiedSampling step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
