"""Map the model's score to its percentile among labelled (or unlabelled) predictions.

Reads: evaluation_data (/opt/ml/processing/input/eval_data): CSV, TSV, Parquet or JSON-lines files with
the score column SCORE_FIELD (default prob_class_1); calibration_config (optional,
/opt/ml/processing/input/calibration_config): a JSON file with the percentile levels to fit, a list of
numbers in [0, 1] or {"percentiles": [...]}; default N_BINS + 1 evenly spaced levels. Points closer
than ACCURACY in score are merged.
Writes: calibration_output (/opt/ml/processing/output/calibration): calibration.json, a piecewise-linear
map {"class_index", "score_field", "x": score quantiles, "y": percentile levels} that the built-in
serving handlers apply when Package puts it in the model archive; metrics_output
(/opt/ml/processing/output/metrics): calibration_metrics.json (points kept, score range, how uniform
the calibrated scores are); calibrated_data (/opt/ml/processing/output/calibrated_data):
calibrated_predictions.csv, the input rows plus calibrated_<SCORE_FIELD>.
"""
import argparse
import json
import os

import numpy as np
import pandas as pd

ENV_DEFAULTS = {"N_BINS": "1000", "ACCURACY": "1e-5"}


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


def levels(config_dir, n_bins):
    """Percentile levels from the optional config file, else evenly spaced."""
    names = sorted(os.listdir(config_dir)) if config_dir and os.path.isdir(config_dir) else []
    for name in (n for n in names if n.endswith(".json")):
        with open(os.path.join(config_dir, name)) as f:
            obj = json.load(f)
        points = obj.get("percentiles") if isinstance(obj, dict) else obj
        points = sorted(float(p) for p in points)
        if not points or points[0] < 0 or points[-1] > 1:
            raise SystemExit("%s: percentile levels must be numbers in [0, 1]" % name)
        return np.array(points)
    return np.linspace(0.0, 1.0, n_bins + 1)


def write_json(folder, name, obj):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        json.dump(obj, f, indent=2)


def main(input_paths, output_paths, environ_vars, job_args):
    field = environ_vars["SCORE_FIELD"]
    data = read_table(input_paths["evaluation_data"])
    if field not in data.columns:
        raise SystemExit("SCORE_FIELD %r is not a column of the data (%s)" % (field, ", ".join(map(str, data.columns))))
    scores = pd.to_numeric(data[field], errors="coerce").dropna().to_numpy(dtype=float)
    y = levels(input_paths.get("calibration_config"), int(environ_vars.get("N_BINS", "1000")))
    x = np.quantile(scores, y)
    accuracy = float(environ_vars.get("ACCURACY", "1e-5"))
    keep = np.concatenate([[True], np.diff(x) > accuracy])
    x, y = x[keep], y[keep]
    calibrated = data.copy()
    calibrated["calibrated_" + field] = np.interp(pd.to_numeric(data[field], errors="coerce"), x, y)
    index = int(field.rsplit("_", 1)[1]) if field.startswith("prob_class_") else 1
    histogram = np.histogram(calibrated["calibrated_" + field].dropna(), bins=10, range=(0, 1))[0] / max(len(scores), 1)
    metrics = {"points": int(len(x)), "score_min": float(x[0]), "score_max": float(x[-1]), "count": int(len(scores)),
               "max_decile_deviation": float(np.abs(histogram - 0.1).max()),
               "job_type": getattr(job_args, "job_type", None) or "calibration"}
    calibration = {"method": "percentile",
                   "classes": [{"class_index": index, "score_field": field, "x": x.tolist(), "y": y.tolist()}]}
    write_json(output_paths["calibration_output"], "calibration.json", calibration)
    write_json(output_paths["metrics_output"], "calibration_metrics.json", metrics)
    os.makedirs(output_paths["calibrated_data"], exist_ok=True)
    calibrated.to_csv(os.path.join(output_paths["calibrated_data"], "calibrated_predictions.csv"), index=False)
    print(json.dumps(metrics))
    return metrics


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="calibration")
    env = {"SCORE_FIELD": os.environ.get("SCORE_FIELD", "prob_class_1")}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main({"evaluation_data": "/opt/ml/processing/input/eval_data",
          "calibration_config": "/opt/ml/processing/input/calibration_config"},
         {"calibration_output": "/opt/ml/processing/output/calibration",
          "metrics_output": "/opt/ml/processing/output/metrics",
          "calibrated_data": "/opt/ml/processing/output/calibrated_data"},
         env, parser.parse_args())
