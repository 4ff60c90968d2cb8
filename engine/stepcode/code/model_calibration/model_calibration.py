"""Fit a score-to-probability calibration on labelled predictions and apply it.

Reads: evaluation_data (/opt/ml/processing/input/eval_data): CSV, TSV, Parquet or JSON-lines files with
the label (LABEL_FIELD) and the model's scores (SCORE_FIELD, default prob_class_1; every prob_class_<i>
when IS_BINARY is false). CALIBRATION_METHOD: isotonic, platt (logistic on the score) or gam (logistic on a
spline basis of the score, made non-decreasing when MONOTONIC_CONSTRAINT is true).
Writes: calibration_output (/opt/ml/processing/output/calibration): calibration.json, per class a
piecewise-linear map {"class_index", "score_field", "x", "y"} that the built-in serving handlers apply
when Package puts it in the model archive (calibration/calibration.json); metrics_output
(/opt/ml/processing/output/metrics): calibration_metrics.json (Brier score and expected calibration
error before and after, per class); calibrated_data (/opt/ml/processing/output/calibrated_data):
calibrated_predictions.csv, the input rows plus calibrated_<score field> columns.
"""
import argparse
import json
import os

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import SplineTransformer

ENV_DEFAULTS = {"SCORE_FIELD": "prob_class_1", "IS_BINARY": "true", "NUM_CLASSES": "2", "MONOTONIC_CONSTRAINT": "true"}


def read_table(folder):
    files = sorted(os.path.join(r, n) for r, _, names in os.walk(folder) for n in names if not n.startswith((".", "_")))
    frames = []
    for f in files:
        if f.endswith(".parquet"):
            frames.append(pd.read_parquet(f))
        elif f.endswith((".jsonl", ".json")):
            frames.append(pd.read_json(f, lines=f.endswith(".jsonl")))
        elif f.endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")):
            frames.append(pd.read_csv(f, sep="\t" if ".tsv" in f else ","))
    if not frames:
        raise SystemExit("no CSV, TSV, Parquet or JSON-lines file under %s" % folder)
    return pd.concat(frames, ignore_index=True)


def fit_map(method, scores, labels, monotonic):
    """x, y of a piecewise-linear map from raw score to calibrated probability."""
    if method == "isotonic":
        iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(scores, labels)
        return iso.X_thresholds_, iso.y_thresholds_
    grid = np.linspace(scores.min(), scores.max(), 501)
    if method == "platt":
        model = LogisticRegression(C=1e6).fit(scores[:, None], labels)
    elif method == "gam":
        model = make_pipeline(SplineTransformer(n_knots=6, degree=3), LogisticRegression(C=10.0)).fit(scores[:, None], labels)
    else:
        raise SystemExit("CALIBRATION_METHOD %r is not one of isotonic, platt, gam" % method)
    y = model.predict_proba(grid[:, None])[:, 1]
    if monotonic:
        y = np.maximum.accumulate(y)
    return grid, y


def quality(probs, labels, bins=10):
    """Brier score and expected calibration error (equal-width bins)."""
    which = np.minimum((probs * bins).astype(int), bins - 1)
    ece = sum(abs(probs[which == b].mean() - labels[which == b].mean()) * (which == b).mean()
              for b in range(bins) if (which == b).any())
    return {"brier": float(np.mean((probs - labels) ** 2)), "ece": float(ece)}


def write_json(folder, name, obj):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        json.dump(obj, f, indent=2)


def main(input_paths, output_paths, environ_vars, job_args):
    label = environ_vars["LABEL_FIELD"]
    method = environ_vars["CALIBRATION_METHOD"].lower()
    monotonic = environ_vars.get("MONOTONIC_CONSTRAINT", "true").lower() == "true"
    data = read_table(input_paths["evaluation_data"])
    if environ_vars.get("IS_BINARY", "true").lower() == "true":
        score_fields = [environ_vars.get("SCORE_FIELD") or "prob_class_1"]
    else:
        score_fields = ["prob_class_%d" % i for i in range(int(environ_vars.get("NUM_CLASSES", "2")))]
    missing = [c for c in [label] + score_fields if c not in data.columns]
    if missing:
        raise SystemExit("columns %s are not in the data (%s)" % (", ".join(missing), ", ".join(map(str, data.columns))))
    data = data[data[label].notna()].reset_index(drop=True)
    labels = pd.to_numeric(data[label]).to_numpy()
    entries, metrics, calibrated = [], {}, data.copy()
    for field in score_fields:
        index = int(field.rsplit("_", 1)[1]) if field.startswith("prob_class_") else 1
        target = (labels == index).astype(float)
        scores = pd.to_numeric(data[field]).to_numpy(dtype=float)
        x, y = fit_map(method, scores, target, monotonic)
        entries.append({"class_index": index, "score_field": field, "x": [float(v) for v in x], "y": [float(v) for v in y]})
        calibrated["calibrated_" + field] = np.interp(scores, x, y)
        metrics[field] = {"before": quality(np.clip(scores, 0, 1), target),
                          "after": quality(calibrated["calibrated_" + field].to_numpy(), target)}
    job_type = getattr(job_args, "job_type", None) or "calibration"
    calibration = {"method": method, "job_type": job_type, "classes": entries}
    report = {"method": method, "count": len(data), "fields": metrics}
    write_json(output_paths["calibration_output"], "calibration.json", calibration)
    write_json(output_paths["metrics_output"], "calibration_metrics.json", report)
    os.makedirs(output_paths["calibrated_data"], exist_ok=True)
    calibrated.to_csv(os.path.join(output_paths["calibrated_data"], "calibrated_predictions.csv"), index=False)
    print(json.dumps(metrics))
    return metrics


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="calibration")
    env = {"LABEL_FIELD": os.environ.get("LABEL_FIELD", "label"),
           "CALIBRATION_METHOD": os.environ.get("CALIBRATION_METHOD", "isotonic")}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main({"evaluation_data": "/opt/ml/processing/input/eval_data"},
         {"calibration_output": "/opt/ml/processing/output/calibration",
          "metrics_output": "/opt/ml/processing/output/metrics",
          "calibrated_data": "/opt/ml/processing/output/calibrated_data"},
         env, parser.parse_args())
