"""Write one sample request per content type from the model's feature list, packed as payload.tar.gz."""
import io
import json
import os
import tarfile

# Python 3.11.4+ (and 3.8.17+) can refuse unsafe archive members; older ones cannot.
SAFE_EXTRACT = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}

MODEL_INPUT = "/opt/ml/processing/input/model"
OUTPUT = "/opt/ml/processing/output"


def main(input_paths, output_paths, environ_vars, job_args):
    model_dir = input_paths["model_input"]
    archive = os.path.join(model_dir, "model.tar.gz")
    if os.path.exists(archive):
        with tarfile.open(archive) as tar:
            tar.extractall(model_dir, **SAFE_EXTRACT)
    with open(os.path.join(model_dir, "model.json")) as f:
        features = json.load(f)["features"]
    special = dict(p.split("=", 1) for p in environ_vars.get("SPECIAL_FIELD_VALUES", "").split(",") if "=" in p)
    values = {f: special.get(f, environ_vars.get("DEFAULT_NUMERIC_VALUE", "0.0")) for f in features}
    os.makedirs(output_paths["payload_sample"], exist_ok=True)
    with tarfile.open(os.path.join(output_paths["payload_sample"], "payload.tar.gz"), "w:gz") as tar:
        for i, content_type in enumerate(environ_vars["CONTENT_TYPES"].split(",")):
            if content_type.strip() == "application/json":
                body = json.dumps(values).encode()
            else:
                body = (",".join(values[f] for f in features) + "\n").encode()
            info = tarfile.TarInfo(f"payload_{i}.{'json' if 'json' in content_type else 'csv'}")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))


if __name__ == "__main__":
    env = {"CONTENT_TYPES": os.environ["CONTENT_TYPES"]}
    for key, default in (("DEFAULT_NUMERIC_VALUE", "0.0"), ("DEFAULT_TEXT_VALUE", "DEFAULT_TEXT"), ("SPECIAL_FIELD_VALUES", "")):
        env[key] = os.environ.get(key, default)
    main({"model_input": MODEL_INPUT}, {"payload_sample": OUTPUT}, env, None)
