"""Tiny training script for the local run's tests: XGBoost on the train
channel (label first), the model as xgboost-model in SM_MODEL_DIR, the
metric line the tuning regex reads, metrics.json in the output data."""
import json, os
import numpy as np
import xgboost as xgb

hp = json.load(open("/opt/ml/input/config/hyperparameters.json"))
data = np.loadtxt(os.path.join(os.environ["SM_CHANNEL_TRAIN"], "train.csv"), delimiter=",", skiprows=1)
y, X = data[:, 0], data[:, 1:]
eta = float(hp.get("eta", "0.3"))
booster = xgb.train({"objective": "binary:logistic", "eta": eta, "max_depth": 2}, xgb.DMatrix(X, label=y), num_boost_round=5)
booster.save_model(os.path.join(os.environ["SM_MODEL_DIR"], "xgboost-model"))
pred = booster.predict(xgb.DMatrix(X))
acc = float(((pred > 0.5) == y).mean()) - abs(eta - 0.2)
with open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], "metrics.json"), "w") as f:
    json.dump({"accuracy": acc}, f)
print("validation:accuracy=%.4f" % acc)
