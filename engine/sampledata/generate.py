"""Generates tabular.csv, the built-in sample data set (run once: /usr/bin/python3 generate.py).

Deterministic (fixed seed, standard library only): 1,500 rows with an id, a binary label (~30% positives)
drawn from a logistic model of the features, six numeric and three categorical columns, ~3% of each feature
cell left empty. A logistic regression on a held-out split reaches AUC ~0.85.
"""
import csv
import math
import random

rng = random.Random(35)
CATS = {"cat_1": ["red", "green", "blue", "gray"], "cat_2": ["us", "uk", "de", "fr", "jp"], "cat_3": ["a", "b", "c"]}
EFFECT = {
    "cat_1": {"red": 1.0, "green": -0.5, "blue": 0.0, "gray": -1.0},
    "cat_2": {"us": 0.4, "uk": 0.0, "de": -0.3, "fr": 0.2, "jp": -0.6},
    "cat_3": {"a": 0.7, "b": 0.0, "c": -0.7},
}

rows = []
for i in range(1500):
    x = [rng.gauss(0, 1) for _ in range(6)]
    x[3] = x[3] * 10 + 50  # a column on another scale
    x[5] = abs(x[5]) * 100  # an amount-like column
    c = {k: rng.choice(v) for k, v in CATS.items()}
    z = -1.3 + 2.0 * x[0] - 1.5 * x[1] + 0.6 * x[2] * x[2] - 0.6 + 0.05 * (x[3] - 50) + sum(EFFECT[k][c[k]] for k in CATS)
    y = 1 if rng.random() < 1 / (1 + math.exp(-z)) else 0
    row = {"id": 100001 + i, "label": y}
    for j in range(6):
        row[f"num_{j + 1}"] = "" if rng.random() < 0.03 else f"{x[j]:.4f}"
    for k in CATS:
        row[k] = "" if rng.random() < 0.03 else c[k]
    rows.append(row)

columns = ["id", "label"] + [f"num_{j}" for j in range(1, 7)] + list(CATS)
with open("tabular.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
