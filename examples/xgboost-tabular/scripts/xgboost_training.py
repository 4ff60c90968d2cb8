"""Train on the train/val/test channels with the hyperparameters shipped in hyperparams/hyperparameters.json."""
import csv
import json
import os

from model_common import auc, fit, predict, read_csv_dir, save_model

INPUT_DATA = "/opt/ml/input/data"
HYPERPARAMETERS = "/opt/ml/code/hyperparams/hyperparameters.json"
MODEL_DIR = "/opt/ml/model"
OUTPUT_DATA = "/opt/ml/output/data"


def main(input_paths, output_paths, environ_vars, job_args):
    with open(input_paths["hyperparameters_s3_uri"]) as f:
        hp = json.load(f)
    label, features = hp["label_name"], hp["tab_field_list"]
    train = read_csv_dir(os.path.join(input_paths["input_path"], "train"))
    model = fit(train, features, label, int(hp.get("num_round", 50)), float(hp.get("eta", 0.2)))
    model["hyperparameters"] = hp
    model["region"] = environ_vars.get("REGION", "NA")
    save_model(model, output_paths["model_output"])
    os.makedirs(output_paths["evaluation_output"], exist_ok=True)
    metrics = {}
    for split in ("val", "test"):
        rows = read_csv_dir(os.path.join(input_paths["input_path"], split))
        scores = [predict(model, r) for r in rows]
        metrics[split + "_auc"] = auc([int(r[label]) for r in rows], scores)
        with open(os.path.join(output_paths["evaluation_output"], f"{split}_predictions.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow([hp.get("id_name", "id"), label, "score"])
            w.writerows([[r.get(hp.get("id_name", "id"), ""), r[label], s] for r, s in zip(rows, scores)])
    with open(os.path.join(output_paths["evaluation_output"], "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)


if __name__ == "__main__":
    main(
        {"input_path": INPUT_DATA, "hyperparameters_s3_uri": HYPERPARAMETERS},
        {"model_output": MODEL_DIR, "evaluation_output": OUTPUT_DATA},
        {"REGION": os.environ.get("REGION", "NA")},
        None,
    )
