"""Score records with the trained model (no metrics; XGBoost, LightGBM, PyTorch).

Reads: model_input (/opt/ml/processing/input/model): model.tar.gz from the framework's training step, or its files;
processed_data (/opt/ml/processing/input/eval_data): CSV, TSV or Parquet files with a header (only the
<job_type>/ sub-folder when there is one). Environment: ID_NAME and LABEL_NAME (empty: the model's
id_name and label_name; the label may be absent), OUTPUT_FORMAT (csv, tsv, parquet or json).
Writes: eval_output (/opt/ml/processing/output/eval): <job_type>_predictions.<format>, every input
column followed by prob_class_<i> per class.
Scores through this folder's inference.py, the handler the model is served with; the same script
serves each framework's <framework>_model_inference folder.
"""
import argparse
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
    probs = predict_proba(data, model)
    scored = data.copy()
    for i in range(probs.shape[1]):
        scored["prob_class_%d" % i] = probs[:, i]
    target = tf.write_table(scored, output_paths["eval_output"], job_type + "_predictions",
                            environ_vars.get("OUTPUT_FORMAT", "csv"))
    print("scored %d records (id %s, label %s) into %s" % (len(scored), id_name, label_name, target))
    return {"records": len(scored)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="calibration")
    env = {"ID_NAME": os.environ.get("ID_NAME", ""), "LABEL_NAME": os.environ.get("LABEL_NAME", ""),
           "OUTPUT_FORMAT": os.environ.get("OUTPUT_FORMAT", "csv")}
    main({"model_input": "/opt/ml/processing/input/model", "processed_data": "/opt/ml/processing/input/eval_data"},
         {"eval_output": "/opt/ml/processing/output/eval"}, env, parser.parse_args())
