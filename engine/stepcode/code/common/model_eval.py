"""Score a processed split with the trained model and compute its metrics (XGBoost, LightGBM, PyTorch).

Reads: model_input (/opt/ml/processing/input/model): model.tar.gz from the framework's training step, or its files;
processed_data (/opt/ml/processing/input/eval_data): CSV, TSV or Parquet files with a header (only the
<job_type>/ sub-folder when there is one). Environment: ID_NAME and LABEL_NAME (empty: the model's
id_name and label_name), OUTPUT_FORMAT (csv, tsv, parquet or json).
Writes: eval_output (/opt/ml/processing/output/eval): eval_predictions.<format> with the id, the label
and prob_class_<i> per class; metrics_output (/opt/ml/processing/output/metrics): metrics.json
(auc_roc, average_precision, f1_score, accuracy, log_loss, count, job_type).
Scores through this folder's inference.py, the handler the model is served with; the same script
serves each framework's <framework>_model_eval folder.
"""
import argparse
import json
import os
import tempfile

import tabular_features as tf
from inference import model_fn, predict_proba


def main(input_paths, output_paths, environ_vars, job_args):
    job_type = getattr(job_args, "job_type", None) or "calibration"
    with tempfile.TemporaryDirectory() as work:
        model = model_fn(tf.extract_model(input_paths["model_input"], work))
    data = tf.read_table(input_paths["processed_data"], prefer=job_type)
    id_name = environ_vars.get("ID_NAME") or model.hp.get("id_name")
    label_name = environ_vars.get("LABEL_NAME") or model.hp["label_name"]
    if label_name not in data.columns:
        raise SystemExit("LABEL_NAME %r is not a column of the data (%s)" % (label_name, ", ".join(map(str, data.columns))))
    probs = predict_proba(data, model)
    tf.write_table(tf.prediction_frame(data, probs, id_name, label_name), output_paths["eval_output"],
                   "eval_predictions", environ_vars.get("OUTPUT_FORMAT", "csv"))
    metrics = tf.classification_metrics(tf.encode_labels(data[label_name], model.classes), probs)
    metrics["job_type"] = job_type
    tf.write_json(metrics, output_paths["metrics_output"], "metrics.json")
    print(json.dumps(metrics, sort_keys=True))
    return metrics


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="calibration")
    env = {"ID_NAME": os.environ.get("ID_NAME", ""), "LABEL_NAME": os.environ.get("LABEL_NAME", ""),
           "OUTPUT_FORMAT": os.environ.get("OUTPUT_FORMAT", "csv")}
    main({"model_input": "/opt/ml/processing/input/model", "processed_data": "/opt/ml/processing/input/eval_data"},
         {"eval_output": "/opt/ml/processing/output/eval", "metrics_output": "/opt/ml/processing/output/metrics"},
         env, parser.parse_args())
