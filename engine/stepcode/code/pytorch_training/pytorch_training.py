"""Train a small tabular MLP with PyTorch on the train/val/test channels (SageMaker script mode, CPU).

Reads: <input_path>/{train,val,test}/ (CSV, TSV or Parquet with a header; SM_CHANNEL_<NAME> when set),
hyperparameters from hyperparams/hyperparameters.json next to this script (or hyperparameters_<REGION>.json)
overlaid with the job's own values (/opt/ml/input/config/hyperparameters.json, --key value flags: a
tuning trial's tuned values): lr, batch_size, max_epochs, optimizer, weight_decay, momentum,
hidden_common_dim, num_layers, dropout_keep, early_stop_patience, seed, and the field lists (inferred
from the training data when not given).
Writes: to the model folder (/opt/ml/model) model.pth, model_config.json, preprocessing.json,
hyperparameters.json (resolved field lists and classes) and code/ (inference.py and its helper, which
the PyTorch serving container loads from the model archive); to the evaluation folder
(/opt/ml/output/data) <split>_predictions.csv and metrics.json for val and test. Logs
`val/auroc=<value>` each epoch and for the kept (best) model last: the tuning metric.
"""
import argparse
import json
import os
import shutil
import sys

import torch
from torch import nn

import tabular_features as tf
from inference import CONFIG_FILE, WEIGHTS_FILE, TabularMLP

HERE = os.path.dirname(os.path.abspath(__file__))


def make_optimizer(hp, params):
    lr, decay = float(hp.get("lr", 1e-3)), float(hp.get("weight_decay", 0.0))
    name = hp.get("optimizer", "Adam")
    if name == "SGD":
        return torch.optim.SGD(params, lr=lr, momentum=float(hp.get("momentum", 0.9)), weight_decay=decay)
    cls = torch.optim.AdamW if name == "AdamW" else torch.optim.Adam
    return cls(params, lr=lr, weight_decay=decay, eps=float(hp.get("adam_epsilon", 1e-8)))


def main(input_paths, output_paths, environ_vars, job_args):
    hp = tf.load_hyperparameters(input_paths.get("hyperparameters_s3_uri"), environ_vars.get("SM_HYPERPARAMETERS_FILE"),
                                 vars(job_args) if job_args else {}, environ_vars.get("REGION"))
    torch.manual_seed(int(hp.get("seed", 0)))
    channels = {s: environ_vars.get("SM_CHANNEL_" + s.upper()) or os.path.join(input_paths["input_path"], s)
                for s in ("train", "val", "test")}
    data = {s: tf.read_table(p) for s, p in channels.items() if os.path.isdir(p)}
    train = data["train"]
    fields = tf.resolve_fields(train, hp)
    classes = tf.resolve_classes(train[fields["label_name"]], hp)
    prep = tf.Preprocessor.fit(train, fields["tab_field_list"], fields["cat_field_list"])
    x = {s: torch.from_numpy(prep.transform(d)) for s, d in data.items()}
    y = {s: tf.encode_labels(d[fields["label_name"]], classes) for s, d in data.items()}

    width, depth = int(hp.get("hidden_common_dim", 64)), int(hp.get("num_layers", 2))
    shape = {"input_dim": x["train"].shape[1], "hidden_dims": [max(4, width // 2 ** i) for i in range(depth)],
             "n_classes": len(classes), "dropout": 1.0 - float(hp.get("dropout_keep", 0.9))}
    net = TabularMLP(**shape)
    optimizer = make_optimizer(hp, net.parameters())
    weights = torch.tensor(hp["class_weights"], dtype=torch.float32) if hp.get("class_weights") else None
    loss_fn = nn.CrossEntropyLoss(weight=weights)
    keep = y["train"] >= 0
    xt, yt = x["train"][keep], torch.from_numpy(y["train"][keep])
    batch, patience = int(hp.get("batch_size", 64)), int(hp.get("early_stop_patience", 5))
    monitor = "val" if "val" in data else "train"

    def probabilities(split):
        net.eval()
        with torch.no_grad():
            return torch.softmax(net(x[split]), dim=1).double().numpy()

    best, best_state, stale = -1.0, None, 0
    for epoch in range(int(hp.get("max_epochs", 30))):
        net.train()
        order = torch.randperm(len(xt))
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            optimizer.zero_grad()
            loss_fn(net(xt[idx]), yt[idx]).backward()
            optimizer.step()
        auc = tf.classification_metrics(y[monitor], probabilities(monitor)).get("auc_roc", 0.0)
        print("epoch=%d %s/auroc=%.6f" % (epoch, monitor, auc))
        if auc > best:
            best, best_state, stale = auc, {k: v.clone() for k, v in net.state_dict().items()}, 0
        else:
            stale += 1
            if patience and stale >= patience:
                break
    net.load_state_dict(best_state)

    model_dir = output_paths["model_output"]
    os.makedirs(os.path.join(model_dir, "code"), exist_ok=True)
    torch.save(net.state_dict(), os.path.join(model_dir, WEIGHTS_FILE))
    tf.write_json(shape, model_dir, CONFIG_FILE)
    tf.ModelBundle.save(model_dir, {**hp, **fields, "classes": classes, "framework": "pytorch"}, prep)
    for name in ("inference.py", "tabular_features.py"):
        shutil.copy(os.path.join(HERE, name), os.path.join(model_dir, "code", name))

    metrics = {}
    for split in ("val", "test"):
        if split in data:
            probs = probabilities(split)
            metrics[split] = tf.classification_metrics(y[split], probs)
            tf.write_table(tf.prediction_frame(data[split], probs, fields["id_name"], fields["label_name"]),
                           output_paths["evaluation_output"], split + "_predictions")
    tf.write_json(metrics, output_paths["evaluation_output"], "metrics.json")
    if "auc_roc" in metrics.get("val", {}):
        print("val/auroc=%.6f" % metrics["val"]["auc_roc"])
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
