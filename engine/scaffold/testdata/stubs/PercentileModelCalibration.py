"""PercentileModelCalibration step script, scaffolded by cursus project.init.

Contract: Fits a score-to-probability mapping on labelled predictions and applies it

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
    "evaluation_data": "/opt/ml/processing/input/eval_data",
    "calibration_config": "/opt/ml/processing/input/calibration_config",
}
CONTAINER_OUTPUTS = {
    "calibration_output": "/opt/ml/processing/output/calibration",
    "metrics_output": "/opt/ml/processing/output/metrics",
    "calibrated_data": "/opt/ml/processing/output/calibrated_data",
}
REQUIRED_ENV = ["SCORE_FIELD"]
OPTIONAL_ENV = {
    "N_BINS": "1000",
    "ACCURACY": "1e-5",
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
    # TODO: implement PercentileModelCalibration.
    inputs = {}
    inputs["evaluation_data"] = _list_files(input_paths["evaluation_data"])
    inputs["calibration_config"] = _list_files(input_paths.get("calibration_config"))
    settings = {}
    settings["SCORE_FIELD"] = environ_vars["SCORE_FIELD"]
    settings["N_BINS"] = environ_vars.get("N_BINS", "1000")
    settings["ACCURACY"] = environ_vars.get("ACCURACY", "1e-5")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "PercentileModelCalibration", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["calibration_output"], manifest)
    _write_manifest(output_paths["metrics_output"], manifest)
    _write_manifest(output_paths["calibrated_data"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="PercentileModelCalibration step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
