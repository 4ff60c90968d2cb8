"""Score the evaluation data with the trained model and compute metrics."""
import argparse
import csv
import json
import os
import tarfile

from model_common import auc, predict, read_csv_dir

# Python 3.11.4+ (and 3.8.17+) can refuse unsafe archive members; older ones cannot.
SAFE_EXTRACT = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}

MODEL_INPUT = "/opt/ml/processing/input/model"
EVAL_DATA = "/opt/ml/processing/input/eval_data"
EVAL_OUTPUT = "/opt/ml/processing/output/eval"
METRICS_OUTPUT = "/opt/ml/processing/output/metrics"


def load_model(directory):
    archive = os.path.join(directory, "model.tar.gz")
    if os.path.exists(archive):
        with tarfile.open(archive) as tar:
            tar.extractall(directory, **SAFE_EXTRACT)
    with open(os.path.join(directory, "model.json")) as f:
        return json.load(f)


def main(input_paths, output_paths, environ_vars, job_args):
    model = load_model(input_paths["model_input"])
    id_name, label = environ_vars["ID_NAME"], environ_vars["LABEL_NAME"]
    rows = read_csv_dir(input_paths["processed_data"])
    scores = [predict(model, r) for r in rows]
    delim = "\t" if environ_vars.get("OUTPUT_FORMAT", "csv").lower() == "tsv" else ","
    for key in ("eval_output", "metrics_output"):
        os.makedirs(output_paths[key], exist_ok=True)
    with open(os.path.join(output_paths["eval_output"], "eval_predictions.csv"), "w", newline="") as f:
        w = csv.writer(f, delimiter=delim)
        w.writerow([id_name, label, "score"])
        w.writerows([[r[id_name], r[label], s] for r, s in zip(rows, scores)])
    labels = [int(r[label]) for r in rows]
    metrics = {"job_type": job_args.job_type, "count": len(rows), "auc": auc(labels, scores)}
    with open(os.path.join(output_paths["metrics_output"], "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", required=True)
    args = parser.parse_args()
    main(
        {"model_input": MODEL_INPUT, "processed_data": EVAL_DATA},
        {"eval_output": EVAL_OUTPUT, "metrics_output": METRICS_OUTPUT},
        {"ID_NAME": os.environ["ID_NAME"], "LABEL_NAME": os.environ["LABEL_NAME"], "OUTPUT_FORMAT": os.environ.get("OUTPUT_FORMAT", "csv")},
        args,
    )
