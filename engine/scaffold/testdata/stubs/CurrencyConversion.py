"""CurrencyConversion step script, scaffolded by cursus project.init.

Contract: Multiplies each listed column by the rate of the row's currency

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
REQUIRED_ENV = ["CURRENCY_CONVERSION_VARS", "CURRENCY_CONVERSION_DICT"]
OPTIONAL_ENV = {
    "CURRENCY_CODE_FIELD": "currency_code",
    "MARKETPLACE_ID_FIELD": "",
    "DEFAULT_CURRENCY": "USD",
    "N_WORKERS": "4",
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
    # TODO: implement CurrencyConversion.
    inputs = {}
    inputs["input_data"] = _list_files(input_paths["input_data"])
    settings = {}
    settings["CURRENCY_CONVERSION_VARS"] = environ_vars["CURRENCY_CONVERSION_VARS"]
    settings["CURRENCY_CONVERSION_DICT"] = environ_vars["CURRENCY_CONVERSION_DICT"]
    settings["CURRENCY_CODE_FIELD"] = environ_vars.get("CURRENCY_CODE_FIELD", "currency_code")
    settings["MARKETPLACE_ID_FIELD"] = environ_vars.get("MARKETPLACE_ID_FIELD", "")
    settings["DEFAULT_CURRENCY"] = environ_vars.get("DEFAULT_CURRENCY", "USD")
    settings["N_WORKERS"] = environ_vars.get("N_WORKERS", "4")
    arguments = {}
    arguments["job_type"] = getattr(job_args, "job_type", None)
    manifest = {"step": "CurrencyConversion", "inputs": inputs, "settings": settings, "arguments": arguments}
    _write_manifest(output_paths["processed_data"], manifest)
    return manifest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="CurrencyConversion step")
    parser.add_argument("--job_type", type=str, default=None)
    args = parser.parse_args()
    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}
    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})
    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]
    if missing:
        sys.exit("missing required environment variables: " + ", ".join(missing))
    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)
