"""Train a LightGBM classifier on the train/val/test channels (script mode in the PyTorch image).

Reads: <input_path>/{train,val,test}/ (CSV, TSV or Parquet with a header; SM_CHANNEL_<NAME> when set),
hyperparameters from hyperparams/hyperparameters.json next to this script (or hyperparameters_<REGION>.json)
overlaid with the job's own values (/opt/ml/input/config/hyperparameters.json, --key value flags: a
tuning trial's tuned values). Field lists not given are inferred from the training data.
Writes: to the model folder (/opt/ml/model) the booster `lightgbm-model.txt`, preprocessing.json,
hyperparameters.json (resolved field lists and classes) and code/ (inference.py, its helper and
requirements.txt, which the serving container loads from the model archive); to the evaluation folder
(/opt/ml/output/data) <split>_predictions.csv and metrics.json for val and test. Logs
`valid_0's auc: <value>` (the tuning metric) for the final model.
lightgbm is not in the PyTorch image: requirements.txt next to this script declares it.
"""
import argparse
import json
import os
import shutil
import sys

import lightgbm as lgb

import tabular_features as tf
from inference import MODEL_FILE

HERE = os.path.dirname(os.path.abspath(__file__))
PARAMS = ("boosting_type", "objective", "learning_rate", "num_leaves", "max_depth", "min_data_in_leaf",
          "min_sum_hessian_in_leaf", "feature_fraction", "bagging_fraction", "bagging_freq", "lambda_l1", "lambda_l2",
          "min_gain_to_split", "max_bin", "num_class", "metric", "is_unbalance", "scale_pos_weight", "seed", "verbose")


def booster_params(hp, n_classes):
    params = {k: hp[k] for k in PARAMS if hp.get(k) is not None}
    if n_classes > 2:
        params.setdefault("objective", "multiclass")
        params["num_class"] = n_classes
        params.setdefault("metric", "multi_logloss")
    else:
        params.setdefault("objective", "binary")
        params.setdefault("metric", "auc")
    params.setdefault("verbose", -1)
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
    prep = tf.Preprocessor.fit(train, fields["tab_field_list"], fields["cat_field_list"])
    x = {s: prep.transform(d) for s, d in data.items()}
    y = {s: tf.encode_labels(d[fields["label_name"]], classes) for s, d in data.items()}
    keep = y["train"] >= 0
    train_set = lgb.Dataset(x["train"][keep], label=y["train"][keep])
    valid = [lgb.Dataset(x["val"], label=y["val"].clip(0), reference=train_set)] if "val" in data else []
    rounds = int(hp.get("num_iterations") or hp.get("n_estimators") or hp.get("num_round") or 100)
    callbacks = [lgb.log_evaluation(10)]
    if valid and int(hp.get("early_stopping_round") or 0) > 0:
        callbacks.append(lgb.early_stopping(int(hp["early_stopping_round"])))
    booster = lgb.train(booster_params(hp, len(classes)), train_set, rounds, valid_sets=valid, callbacks=callbacks)

    model_dir = output_paths["model_output"]
    os.makedirs(os.path.join(model_dir, "code"), exist_ok=True)
    booster.save_model(os.path.join(model_dir, MODEL_FILE))
    tf.ModelBundle.save(model_dir, {**hp, **fields, "classes": classes, "framework": "lightgbm"}, prep)
    for name in ("inference.py", "tabular_features.py", "requirements.txt"):
        shutil.copy(os.path.join(HERE, name), os.path.join(model_dir, "code", name))

    metrics = {}
    for split in ("val", "test"):
        if split in data:
            probs = tf.class_probabilities(booster.predict(x[split], num_iteration=booster.best_iteration or None),
                                           len(classes))
            metrics[split] = tf.classification_metrics(y[split], probs)
            tf.write_table(tf.prediction_frame(data[split], probs, fields["id_name"], fields["label_name"]),
                           output_paths["evaluation_output"], split + "_predictions")
    tf.write_json(metrics, output_paths["evaluation_output"], "metrics.json")
    if "auc_roc" in metrics.get("val", {}):
        print("valid_0's auc: %.6f" % metrics["val"]["auc_roc"])
    print(json.dumps(metrics, sort_keys=True))
    return metrics


if __name__ == "__main__":
    env = {"REGION": os.environ.get("REGION", "NA")}
    env.update({k: v for k, v in os.environ.items() if k.startswith("SM_CHANNEL_")})
    env["SM_HYPERPARAMETERS_FILE"] = os.path.join(os.environ.get("SM_INPUT_CONFIG_DIR", "/opt/ml/input/config"),
                                                  "hyperparameters.json")
    channel = os.environ.get("SM_CHANNEL_HYPERPARAMETERS_S3_URI")  # when passed as a channel instead
    main({"input_path": os.environ.get("SM_INPUT_DIR", "/opt/ml/input") + "/data",
          "hyperparameters_s3_uri": os.path.join(channel or os.path.join(HERE, "hyperparams"), "hyperparameters.json")},
         {"model_output": os.environ.get("SM_MODEL_DIR", "/opt/ml/model"),
          "evaluation_output": os.environ.get("SM_OUTPUT_DATA_DIR", "/opt/ml/output/data")},
         env, argparse.Namespace(**tf.parse_flags(sys.argv[1:])))
