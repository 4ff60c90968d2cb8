"""Compute classification metrics from scored records.

Reads: eval_output (/opt/ml/processing/input/eval_data): scored files (INPUT_FORMAT auto, csv, tsv,
parquet or json) with LABEL_NAME and the model's prob_class_<i> columns (or prob, score, prediction).
Headerless files (a batch transform's .out) are read as <id>,<label>,…,<score> (or <label>,<score>).
AMOUNT_FIELD, when set and present, weights the dollar recall.
Writes: metrics_output (/opt/ml/processing/output/metrics): metrics.json (auc_roc, average_precision,
f1_score, accuracy, count, positive_rate, count/dollar recall among the top 1, 5 and 10 % of scores)
and metrics_report.txt; plots_output (/opt/ml/processing/output/plots): roc_curve.csv and pr_curve.csv
(and PNG charts when matplotlib is installed).
"""
import argparse
import json
import os

import numpy as np
import pandas as pd
from sklearn import metrics as skm

ENV_DEFAULTS = {"AMOUNT_FIELD": "", "INPUT_FORMAT": "auto", "COMPUTE_DOLLAR_RECALL": "true", "COMPUTE_COUNT_RECALL": "true"}
SUFFIXES = {"csv": (".csv", ".csv.gz", ".out"), "tsv": (".tsv", ".tsv.gz"), "parquet": (".parquet",), "json": (".json", ".jsonl")}


def read_file(name, kind, label):
    if kind == "parquet":
        return pd.read_parquet(name)
    if kind == "json":
        return pd.read_json(name, lines=name.endswith(".jsonl"))
    sep = "\t" if kind == "tsv" else ","
    frame = pd.read_csv(name, sep=sep, header=None, dtype=str)
    if label in set(frame.iloc[0]):
        frame = frame.iloc[1:].set_axis(list(frame.iloc[0]), axis=1)
    for col in frame.columns:
        numeric = pd.to_numeric(frame[col], errors="coerce")
        if numeric.notna().sum() == frame[col].notna().sum():
            frame[col] = numeric
    return frame


def read_scored(folder, fmt, label):
    kinds = [fmt] if fmt in SUFFIXES else list(SUFFIXES)
    frames = []
    for root, _, names in sorted(os.walk(folder)):
        for name in sorted(names):
            kind = next((k for k in kinds if name.endswith(SUFFIXES[k])), None)
            if kind and not name.startswith((".", "_")):
                frames.append(read_file(os.path.join(root, name), kind, label))
    if not frames:
        raise SystemExit("no scored files under %s" % folder)
    return pd.concat(frames, ignore_index=True)


def name_headerless(frame, id_name, label):
    """A batch transform's rows: <id>,<label>,…,<score> or <label>,<score>."""
    if all(isinstance(c, str) for c in frame.columns):
        return frame
    if frame.shape[1] < 2:
        raise SystemExit("headerless records with %d column(s): need at least the label and the score" % frame.shape[1])
    names = [label] if frame.shape[1] == 2 else [id_name, label]
    names += ["_%d" % i for i in range(len(names), frame.shape[1] - 1)] + ["prob_class_1"]
    return frame.set_axis(names, axis=1)


def top_recall(scores, labels, weights, share):
    top = np.argsort(-scores)[: max(1, int(round(len(scores) * share)))]
    total = (weights * labels).sum()
    return float((weights[top] * labels[top]).sum() / total) if total else None


def main(input_paths, output_paths, environ_vars, job_args):
    id_name, label = environ_vars["ID_NAME"], environ_vars["LABEL_NAME"]
    data = name_headerless(read_scored(input_paths["eval_output"], environ_vars.get("INPUT_FORMAT", "auto").lower(), label), id_name, label)
    if label not in data.columns:
        raise SystemExit("LABEL_NAME %r is not a column of the scored data (%s)" % (label, ", ".join(map(str, data.columns))))
    data = data[pd.to_numeric(data[label], errors="coerce").notna()]
    y = pd.to_numeric(data[label]).astype(int).to_numpy()
    prob_cols = sorted((c for c in data.columns if str(c).startswith("prob_class_")), key=lambda c: int(c.rsplit("_", 1)[1]))
    if len(prob_cols) > 2:
        probs = data[prob_cols].astype(float).to_numpy()
        result = {"count": int(len(y)), "accuracy": float(skm.accuracy_score(y, probs.argmax(1))),
                  "f1_score": float(skm.f1_score(y, probs.argmax(1), average="macro")),
                  "auc_roc": float(skm.roc_auc_score(y, probs, multi_class="ovr", labels=list(range(len(prob_cols)))))}
        scores = None
    else:
        score_col = next((c for c in ["prob_class_1", "prob", "score", "prediction"] if c in data.columns), None)
        if score_col is None:
            raise SystemExit("no score column (prob_class_1, prob, score or prediction) in %s" % ", ".join(map(str, data.columns)))
        scores = pd.to_numeric(data[score_col]).to_numpy(dtype=float)
        result = {"count": int(len(y)), "score_field": score_col, "positive_rate": float(y.mean()),
                  "auc_roc": float(skm.roc_auc_score(y, scores)), "average_precision": float(skm.average_precision_score(y, scores)),
                  "f1_score": float(skm.f1_score(y, scores >= 0.5)), "accuracy": float(skm.accuracy_score(y, scores >= 0.5))}
        amount_field = environ_vars.get("AMOUNT_FIELD")
        for share in (0.01, 0.05, 0.10):
            key = "%dpct" % round(share * 100)
            if environ_vars.get("COMPUTE_COUNT_RECALL", "true").lower() == "true":
                result["count_recall_top_" + key] = top_recall(scores, y, np.ones(len(y)), share)
            if environ_vars.get("COMPUTE_DOLLAR_RECALL", "true").lower() == "true" and amount_field in data.columns:
                amounts = pd.to_numeric(data[amount_field], errors="coerce").fillna(0).to_numpy()
                result["dollar_recall_top_" + key] = top_recall(scores, y, amounts, share)
    result["job_type"] = getattr(job_args, "job_type", None) or "calibration"

    os.makedirs(output_paths["metrics_output"], exist_ok=True)
    with open(os.path.join(output_paths["metrics_output"], "metrics.json"), "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)
    with open(os.path.join(output_paths["metrics_output"], "metrics_report.txt"), "w") as f:
        f.writelines("%s: %s\n" % kv for kv in sorted(result.items()))
    os.makedirs(output_paths["plots_output"], exist_ok=True)
    if scores is not None:
        fpr, tpr, thr = skm.roc_curve(y, scores)
        pd.DataFrame({"fpr": fpr, "tpr": tpr, "threshold": thr}).to_csv(os.path.join(output_paths["plots_output"], "roc_curve.csv"), index=False)
        precision, recall, thr = skm.precision_recall_curve(y, scores)
        pd.DataFrame({"precision": precision[:-1], "recall": recall[:-1], "threshold": thr}).to_csv(
            os.path.join(output_paths["plots_output"], "pr_curve.csv"), index=False)
        plot(output_paths["plots_output"], fpr, tpr, recall, precision)
    print(json.dumps(result, sort_keys=True))
    return result


def plot(folder, fpr, tpr, recall, precision):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    for name, (x, y, xl, yl) in {"roc_curve.png": (fpr, tpr, "false positive rate", "true positive rate"),
                                 "pr_curve.png": (recall, precision, "recall", "precision")}.items():
        fig, ax = plt.subplots(figsize=(5, 5))
        ax.plot(x, y)
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        fig.savefig(os.path.join(folder, name))
        plt.close(fig)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="calibration")
    env = {"ID_NAME": os.environ.get("ID_NAME", "id"), "LABEL_NAME": os.environ.get("LABEL_NAME", "label")}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main({"eval_output": "/opt/ml/processing/input/eval_data"},
         {"metrics_output": "/opt/ml/processing/output/metrics", "plots_output": "/opt/ml/processing/output/plots"},
         env, parser.parse_args())
