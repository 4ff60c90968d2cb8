"""DummyDataLoading step script, scaffolded by cursus project.init.

Contract: Reads the files under data_source, writes them as data, a schema metadata file and a column signature

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
    "data_source": "/opt/ml/processing/input/data",
}
CONTAINER_OUTPUTS = {
    "data_output": "/opt/ml/processing/output/data",
    "metadata_output": "/opt/ml/processing/output/metadata",
    "signature": "/opt/ml/processing/output/signature",
}
REQUIRED_ENV = []
OPTIONAL_ENV = {
    "WRITE_DATA_SHARDS": "false",
    "SHARD_SIZE": "10000",
    "OUTPUT_FORMAT": "CSV",
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
    # TODO: implement DummyDataLoading.
    inputs = {}
    inputs["data_source"] = _list_files(input_paths.get("data_source"))
    settings = {}
    settings["WRITE_DATA_SHARDS"] = environ_vars.get("WRITE_DATA_SHARDS", "false")
    settings["SHARD_SIZE"] = environ_vars.get("SHARD_SIZE", "10000")
    settings["OUTPUT_FORMAT"] = environ_vars.get("OUTPUT_FORMAT", "CSV")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "DummyDataLoading", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["data_output"], manifest)
    _write_manifest(output_paths["metadata_output"], manifest)
    _write_manifest(output_paths["signature"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="DummyDataLoading step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
