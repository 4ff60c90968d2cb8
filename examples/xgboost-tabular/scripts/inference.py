"""Serving functions for the packaged model (SAGEMAKER_PROGRAM)."""
import json
import os

from model_common import predict


def model_fn(model_dir):
    with open(os.path.join(model_dir, "model.json")) as f:
        return json.load(f)


def input_fn(body, content_type):
    text = body.decode() if isinstance(body, bytes) else body
    if content_type == "application/json":
        return [json.loads(text)]
    return [line.split(",") for line in text.strip().splitlines()]


def predict_fn(rows, model):
    out = []
    for r in rows:
        row = r if isinstance(r, dict) else dict(zip(model["features"], r))
        out.append(predict(model, row))
    return out


def output_fn(scores, accept):
    return json.dumps({"scores": scores}), "application/json"
