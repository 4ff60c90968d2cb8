"""Serving functions shipped inside the packaged model as code/inference.py.

The Package step copies this folder (config inference_scripts_input_path, relative to
source_dir) into code/ of model.tar.gz. It is self-contained, standard library only: it
scores rows with the model.json the training step writes (logistic regression weights).
"""
import json
import math
import os


def model_fn(model_dir):
    with open(os.path.join(model_dir, "model.json")) as f:
        return json.load(f)


def input_fn(body, content_type):
    text = body.decode() if isinstance(body, bytes) else body
    if content_type == "application/json":
        data = json.loads(text)
        return data if isinstance(data, list) else [data]
    return [line.split(",") for line in text.strip().splitlines()]


def predict_fn(rows, model):
    scores = []
    for r in rows:
        row = r if isinstance(r, dict) else dict(zip(model["features"], r))
        z = model["bias"] + sum(w * float(row[f]) for f, w in zip(model["features"], model["weights"]))
        scores.append(1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0))))
    return scores


def output_fn(scores, accept):
    return json.dumps({"scores": scores}), "application/json"
