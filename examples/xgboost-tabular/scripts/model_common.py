"""A tiny logistic-regression model in pure Python, so the example's scripts need nothing beyond the standard library.

It stands in for XGBoost in the example: the pipeline wiring, paths and artifacts are the same.
"""
import csv
import json
import math
import os


def read_csv_dir(directory):
    rows = []
    for root, _, files in sorted(os.walk(directory)):
        for name in sorted(files):
            if name.endswith(".csv"):
                with open(os.path.join(root, name), newline="") as f:
                    rows.extend(csv.DictReader(f))
    return rows


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


def predict(model, row):
    z = model["bias"] + sum(w * float(row[f]) for f, w in zip(model["features"], model["weights"]))
    return sigmoid(z)


def fit(rows, features, label, rounds, eta):
    weights, bias = [0.0] * len(features), 0.0
    for _ in range(rounds):
        grad_w, grad_b = [0.0] * len(features), 0.0
        for r in rows:
            err = sigmoid(bias + sum(w * float(r[f]) for f, w in zip(features, weights))) - float(r[label])
            grad_b += err
            for i, f in enumerate(features):
                grad_w[i] += err * float(r[f])
        n = max(len(rows), 1)
        bias -= eta * grad_b / n
        weights = [w - eta * g / n for w, g in zip(weights, grad_w)]
    return {"features": features, "weights": weights, "bias": bias}


def auc(labels, scores):
    pairs = sorted(zip(scores, labels))
    pos = sum(labels)
    neg = len(labels) - pos
    if pos == 0 or neg == 0:
        return 0.5
    rank_sum = sum(i + 1 for i, (_, y) in enumerate(pairs) if y == 1)
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def save_model(model, directory):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "model.json"), "w") as f:
        json.dump(model, f, indent=2)
