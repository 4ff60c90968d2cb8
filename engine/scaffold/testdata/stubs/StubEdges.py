"""StubEdges step script, scaffolded by cursus project.init.

Contract: Reads '''quoted''' data — and writes “it” back

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
    "extra": "/opt/ml/processing/input/extra",
}
CONTAINER_OUTPUTS = {
    "processed_data": "/opt/ml/processing/output",
    "report": "/opt/ml/processing/report",
}
REQUIRED_ENV = ["LABEL_FIELD", "ID_FIELD"]
OPTIONAL_ENV = {
    "TRAIN_RATIO": "0.7",
    "QUOTE": "a\"b",
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
    # TODO: implement StubEdges.
    inputs = {}
    inputs["input_data"] = _list_files(input_paths["input_data"])
    inputs["no_path"] = _list_files(input_paths["no_path"])
    inputs["extra"] = _list_files(input_paths.get("extra"))
    settings = {}
    settings["LABEL_FIELD"] = environ_vars["LABEL_FIELD"]
    settings["ID_FIELD"] = environ_vars["ID_FIELD"]
    settings["TRAIN_RATIO"] = environ_vars.get("TRAIN_RATIO", "0.7")
    settings["QUOTE"] = environ_vars.get("QUOTE", "a\"b")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    arguments["mode"] = getattr(job_args, "mode", None)
    manifest = {"step": "StubEdges", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["processed_data"], manifest)
    _write_manifest(output_paths["report"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="StubEdges step")
    parser.add_argument("--job_type", type=str, default=None)
    parser.add_argument("--mode", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
