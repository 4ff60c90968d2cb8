"""Train an XGBoost classifier on the train/val/test channels (SageMaker script mode).

Reads: <input_path>/{train,val,test}/ (CSV, TSV or Parquet with a header; SM_CHANNEL_<NAME> when set),
hyperparameters from hyperparams/hyperparameters.json next to this script (or hyperparameters_<REGION>.json)
overlaid with the job's own values (/opt/ml/input/config/hyperparameters.json, --key value flags: a
tuning trial's tuned values). Field lists not given are inferred from the training data.
Writes: to the model folder (/opt/ml/model) the booster `xgboost-model`, preprocessing.json,
hyperparameters.json (resolved field lists and classes) and code/ (inference.py and its helper, what the
serving container loads); to the evaluation folder (/opt/ml/output/data) <split>_predictions.csv and
metrics.json for val and test. Logs `validation-auc:<value>` (the tuning metric) for the final model.
"""
import argparse
import json
import os
import shutil
import sys

import xgboost as xgb

import tabular_features as tf
from inference import MODEL_FILE

HERE = os.path.dirname(os.path.abspath(__file__))
PARAMS = ("eta", "max_depth", "min_child_weight", "gamma", "subsample", "colsample_bytree", "colsample_bylevel",
          "colsample_bynode", "lambda", "alpha", "max_delta_step", "scale_pos_weight", "max_bin", "max_leaves",
          "booster", "tree_method", "grow_policy", "objective", "num_class", "eval_metric", "base_score", "seed")


def booster_params(hp, n_classes):
    params = {k: hp[k] for k in PARAMS if hp.get(k) is not None}
    if n_classes > 2:
        params.setdefault("objective", "multi:softprob")
        params["num_class"] = n_classes
        params.setdefault("eval_metric", "mlogloss")
    else:
        params.setdefault("objective", "binary:logistic")
        params.setdefault("eval_metric", "auc")
    return params


def main(input_paths, output_paths, environ_vars, job_args):
    hp = tf.load_hyperparameters(input_paths.get("hyperparameters_s3_uri"), environ_vars.get("SM_HYPERPARAMETERS_FILE"),
                                 vars(job_args) if job_args else {}, environ_vars.get("REGION"))
    channels = {s: environ_vars.get("SM_CHANNEL_" + s.upper()) or os.path.join(input_paths["input_path"], s)
                for s in ("train", "val", "test")}
    data = {s: tf.read_table(p) for s, p in channels.items() if os.path.isdir(p)}
    train = data["train"]
    fields = tf.resolve_fields(train, hp)
    classes = tf.resolve_classes(train[fields["label_name"]], hp)
    train = data["train"] = train[tf.encode_labels(train[fields["label_name"]], classes) >= 0]
    prep = tf.Preprocessor.fit(train, fields["tab_field_list"], fields["cat_field_list"])
    matrices = {s: xgb.DMatrix(prep.transform(d), label=tf.encode_labels(d[fields["label_name"]], classes).clip(0))
                for s, d in data.items()}
    evals = [(matrices["train"], "train")] + ([(matrices["val"], "validation")] if "val" in matrices else [])
    stop = int(hp.get("early_stopping_rounds") or 0) if len(evals) > 1 else 0
    booster = xgb.train(booster_params(hp, len(classes)), matrices["train"], int(hp.get("num_round", 100)), evals=evals,
                        early_stopping_rounds=stop or None, verbose_eval=10)
    if stop and hp.get("booster", "gbtree") != "gblinear":
        booster = booster[: booster.best_iteration + 1]  # keep the best rounds only (what is saved and served)

    model_dir = output_paths["model_output"]
    os.makedirs(model_dir, exist_ok=True)
    booster.save_model(os.path.join(model_dir, MODEL_FILE))
    tf.ModelBundle.save(model_dir, {**hp, **fields, "classes": classes, "framework": "xgboost"}, prep)
    os.makedirs(os.path.join(model_dir, "code"), exist_ok=True)
    for name in ("inference.py", "tabular_features.py"):
        shutil.copy(os.path.join(HERE, name), os.path.join(model_dir, "code", name))

    metrics = {}
    for split in ("val", "test"):
        if split not in data:
            continue
        d = data[split]
        probs = tf.class_probabilities(booster.predict(matrices[split]), len(classes))
        metrics[split] = tf.classification_metrics(tf.encode_labels(d[fields["label_name"]], classes), probs)
        tf.write_table(tf.prediction_frame(d, probs, fields["id_name"], fields["label_name"]),
                       output_paths["evaluation_output"], split + "_predictions")
    tf.write_json(metrics, output_paths["evaluation_output"], "metrics.json")
    if "auc_roc" in metrics.get("val", {}):
        print("validation-auc:%.6f" % metrics["val"]["auc_roc"])
    print(json.dumps(metrics, sort_keys=True))
    return metrics


if __name__ == "__main__":
    env = {"REGION": os.environ.get("REGION", "NA")}
    env.update({k: v for k, v in os.environ.items() if k.startswith("SM_CHANNEL_")})
    env["SM_HYPERPARAMETERS_FILE"] = os.path.join(os.environ.get("SM_INPUT_CONFIG_DIR", "/opt/ml/input/config"),
                                                  "hyperparameters.json")
    flags = tf.parse_flags(sys.argv[1:])
    channel = os.environ.get("SM_CHANNEL_HYPERPARAMETERS_S3_URI")  # when passed as a channel instead
    main({"input_path": os.environ.get("SM_INPUT_DIR", "/opt/ml/input") + "/data",
          "hyperparameters_s3_uri": os.path.join(channel or os.path.join(HERE, "hyperparams"), "hyperparameters.json")},
         {"model_output": os.environ.get("SM_MODEL_DIR", "/opt/ml/model"),
          "evaluation_output": os.environ.get("SM_OUTPUT_DATA_DIR", "/opt/ml/output/data")},
         env, argparse.Namespace(**flags))
