"""LightGBMModelInference step script, scaffolded by cursus project.init.

Contract: Scores the data with the trained model (no metrics)

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
    "model_input": "/opt/ml/processing/input/model",
    "processed_data": "/opt/ml/processing/input/eval_data",
}
CONTAINER_OUTPUTS = {
    "eval_output": "/opt/ml/processing/output/eval",
}
REQUIRED_ENV = ["ID_NAME", "LABEL_NAME"]
OPTIONAL_ENV = {
    "OUTPUT_FORMAT": "csv",
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
    # TODO: implement LightGBMModelInference.
    inputs = {}
    inputs["model_input"] = _list_files(input_paths["model_input"])
    inputs["processed_data"] = _list_files(input_paths["processed_data"])
    settings = {}
    settings["ID_NAME"] = environ_vars["ID_NAME"]
    settings["LABEL_NAME"] = environ_vars["LABEL_NAME"]
    settings["OUTPUT_FORMAT"] = environ_vars.get("OUTPUT_FORMAT", "csv")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "LightGBMModelInference", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["eval_output"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="LightGBMModelInference step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
