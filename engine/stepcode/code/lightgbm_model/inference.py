"""Serving handler of the built-in LightGBM model (SageMaker inference toolkit functions, PyTorch image).

model_fn reads what lightgbm_training writes to the model directory: the booster `lightgbm-model.txt`,
preprocessing.json, hyperparameters.json (field lists and classes) and, once Package has added it,
calibration/calibration.json. input_fn takes text/csv rows (the model's
input_field_list in order, or every field of the training data; a first row naming the fields is
answered with the score columns' names) or application/json; predict_fn returns class probabilities,
calibrated when the package carries a calibration; output_fn writes one score per line for a binary
model (comma-joined probabilities for more classes), or JSON.
lightgbm is not in the serving image: requirements.txt next to this file declares it.
"""
import os

import lightgbm as lgb

import tabular_features as tf

MODEL_FILE = "lightgbm-model.txt"


def model_fn(model_dir):
    model = tf.ModelBundle(model_dir)
    model.booster = lgb.Booster(model_file=os.path.join(model_dir, MODEL_FILE))
    return model


def input_fn(request_body, content_type):
    return tf.parse_request(request_body, content_type)


def predict_proba(data, model):
    """Uncalibrated class probabilities of the records in data (a DataFrame)."""
    return tf.class_probabilities(model.booster.predict(model.matrix(data)), len(model.classes))


def predict_fn(data, model):
    return model.serve(data, predict_proba)


def output_fn(prediction, accept):
    return tf.format_response(prediction, accept)
