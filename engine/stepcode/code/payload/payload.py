"""Write sample inference requests for the trained model, packed as payload.tar.gz.

Reads: model_input (/opt/ml/processing/input/model): model.tar.gz (or its files) with the
hyperparameters.json the built-in trainers write (input_field_list, tab_field_list, cat_field_list);
custom_payload_input (optional, /opt/ml/processing/input/custom_payload): hand-written samples shipped
instead of generated ones. Environment: CONTENT_TYPES (comma-separated or a JSON list: text/csv,
application/json), DEFAULT_NUMERIC_VALUE, DEFAULT_TEXT_VALUE, SPECIAL_FIELD_VALUES (a JSON object or
field=value pairs, comma-separated).
Writes: payload_sample (/opt/ml/processing/output): payload.tar.gz holding payload_<content type>_0.<ext>
per content type (text/csv: one header-less row of the input fields in order; application/json: a list
with one record) and metadata.json ({"input_field_list", "content_types", "samples": [{"file",
"content_type"}]}).
"""
import csv
import io
import json
import os
import tarfile
import tempfile

ENV_DEFAULTS = {"DEFAULT_NUMERIC_VALUE": "0.0", "DEFAULT_TEXT_VALUE": "DEFAULT_TEXT", "SPECIAL_FIELD_VALUES": ""}
EXTENSIONS = {"text/csv": "csv", "application/json": "json", "application/jsonlines": "jsonl"}


def model_hyperparameters(model_input):
    archive = model_input if os.path.isfile(model_input) else os.path.join(model_input, "model.tar.gz")
    if os.path.isfile(archive):
        with tarfile.open(archive) as tar:
            member = next((m for m in tar.getmembers() if os.path.normpath(m.name) == "hyperparameters.json"), None)
            if member is None:
                raise SystemExit("%s has no hyperparameters.json with the model's input fields" % archive)
            return json.load(tar.extractfile(member))
    with open(os.path.join(model_input, "hyperparameters.json")) as f:
        return json.load(f)


def parse_list(value):
    value = (value or "").strip()
    if value.startswith("["):
        return json.loads(value)
    return [v.strip() for v in value.split(",") if v.strip()]


def parse_special(value):
    value = (value or "").strip()
    if value.startswith("{"):
        return {k: str(v) for k, v in json.loads(value).items()}
    return dict(p.split("=", 1) for p in value.split(",") if "=" in p)


def samples(hp, content_types, environ_vars):
    fields = hp.get("input_field_list") or hp.get("tab_field_list", []) + hp.get("cat_field_list", [])
    if not fields:
        raise SystemExit("the model's hyperparameters.json names no input fields")
    numeric = set(hp.get("tab_field_list", fields if not hp.get("cat_field_list") else []))
    special = parse_special(environ_vars.get("SPECIAL_FIELD_VALUES"))
    record = {f: special.get(f, environ_vars.get("DEFAULT_NUMERIC_VALUE", "0.0") if f in numeric
                             else environ_vars.get("DEFAULT_TEXT_VALUE", "DEFAULT_TEXT")) for f in fields}
    out = {}
    for ctype in content_types:
        ext = EXTENSIONS.get(ctype)
        if ext is None:
            raise SystemExit("CONTENT_TYPES: %r is not one of %s" % (ctype, ", ".join(EXTENSIONS)))
        if ext == "csv":
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow([record[f] for f in fields])
            body = buf.getvalue()
        else:
            typed = {f: float(v) if f in numeric and f not in special else v for f, v in record.items()}
            body = json.dumps([typed]) if ext == "json" else json.dumps(typed) + "\n"
        out["payload_%s_0.%s" % (ctype.replace("/", "_"), ext)] = (ctype, body.encode())
    return fields, out


def main(input_paths, output_paths, environ_vars, job_args):
    content_types = parse_list(environ_vars["CONTENT_TYPES"]) or ["text/csv"]
    hp = model_hyperparameters(input_paths["model_input"])
    fields, files = samples(hp, content_types, environ_vars)
    custom = input_paths.get("custom_payload_input")
    if custom and os.path.isdir(custom) and os.listdir(custom):
        files = {}
        for name in sorted(os.listdir(custom)):
            ext = name.rsplit(".", 1)[-1]
            ctype = next((c for c, e in EXTENSIONS.items() if e == ext), "text/csv")
            with open(os.path.join(custom, name), "rb") as f:
                files[name] = (ctype, f.read())
    meta = {"input_field_list": fields, "content_types": content_types,
            "samples": [{"file": name, "content_type": ctype} for name, (ctype, _) in files.items()]}
    files["metadata.json"] = ("application/json", json.dumps(meta, indent=2).encode())
    os.makedirs(output_paths["payload_sample"], exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=output_paths["payload_sample"], delete=False) as tmp:
        with tarfile.open(fileobj=tmp, mode="w:gz") as tar:
            for name, (_, body) in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(body)
                tar.addfile(info, io.BytesIO(body))
    os.replace(tmp.name, os.path.join(output_paths["payload_sample"], "payload.tar.gz"))
    print(json.dumps(meta))
    return meta


if __name__ == "__main__":
    env = {"CONTENT_TYPES": os.environ.get("CONTENT_TYPES", "text/csv")}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main({"model_input": "/opt/ml/processing/input/model",
          "custom_payload_input": "/opt/ml/processing/input/custom_payload"},
         {"payload_sample": "/opt/ml/processing/output"}, env, None)
