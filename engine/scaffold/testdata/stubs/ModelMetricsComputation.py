"""ModelMetricsComputation step script, scaffolded by cursus project.init.

Contract: Reads predictions with labels, writes metrics.json, a text report and ROC/PR plots

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
    "eval_output": "/opt/ml/processing/input/eval_data",
}
CONTAINER_OUTPUTS = {
    "metrics_output": "/opt/ml/processing/output/metrics",
    "plots_output": "/opt/ml/processing/output/plots",
}
REQUIRED_ENV = ["ID_NAME", "LABEL_NAME"]
OPTIONAL_ENV = {
    "AMOUNT_FIELD": "",
    "INPUT_FORMAT": "auto",
    "COMPUTE_DOLLAR_RECALL": "true",
    "COMPUTE_COUNT_RECALL": "true",
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
    # TODO: implement ModelMetricsComputation.
    inputs = {}
    inputs["eval_output"] = _list_files(input_paths["eval_output"])
    settings = {}
    settings["ID_NAME"] = environ_vars["ID_NAME"]
    settings["LABEL_NAME"] = environ_vars["LABEL_NAME"]
    settings["AMOUNT_FIELD"] = environ_vars.get("AMOUNT_FIELD", "")
    settings["INPUT_FORMAT"] = environ_vars.get("INPUT_FORMAT", "auto")
    settings["COMPUTE_DOLLAR_RECALL"] = environ_vars.get("COMPUTE_DOLLAR_RECALL", "true")
    settings["COMPUTE_COUNT_RECALL"] = environ_vars.get("COMPUTE_COUNT_RECALL", "true")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "ModelMetricsComputation", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["metrics_output"], manifest)
    _write_manifest(output_paths["plots_output"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="ModelMetricsComputation step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
