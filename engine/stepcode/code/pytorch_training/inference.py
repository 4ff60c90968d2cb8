"""Serving handler of the built-in PyTorch tabular model (SageMaker inference toolkit functions).

model_fn reads what pytorch_training writes to the model directory: the weights `model.pth`, the network
shape `model_config.json`, preprocessing.json, hyperparameters.json (field lists and classes) and, once
Package has added it, calibration/calibration.json. input_fn takes text/csv rows (the model's
input_field_list in order, or every field of the training data; a first row naming the fields is
answered with the score columns' names) or application/json; predict_fn returns class probabilities,
calibrated when the package carries a calibration; output_fn writes one score per line for a binary
model (comma-joined probabilities for more classes), or JSON.
TabularMLP is the network pytorch_training trains.
"""
import json
import os

import torch
from torch import nn

import tabular_features as tf

WEIGHTS_FILE = "model.pth"
CONFIG_FILE = "model_config.json"


class TabularMLP(nn.Module):
    """Dense layers with ReLU and dropout; one logit per class."""

    def __init__(self, input_dim, hidden_dims, n_classes, dropout):
        super().__init__()
        layers, width = [], input_dim
        for h in hidden_dims:
            layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(dropout)]
            width = h
        layers.append(nn.Linear(width, n_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def model_fn(model_dir):
    model = tf.ModelBundle(model_dir)
    with open(os.path.join(model_dir, CONFIG_FILE)) as f:
        model.net = TabularMLP(**json.load(f))
    model.net.load_state_dict(torch.load(os.path.join(model_dir, WEIGHTS_FILE), map_location="cpu"))
    model.net.eval()
    return model


def input_fn(request_body, content_type):
    return tf.parse_request(request_body, content_type)


def predict_proba(data, model):
    """Uncalibrated class probabilities of the records in data (a DataFrame)."""
    with torch.no_grad():
        logits = model.net(torch.from_numpy(model.matrix(data)))
    return torch.softmax(logits, dim=1).double().numpy()


def predict_fn(data, model):
    return model.serve(data, predict_proba)


def output_fn(prediction, accept):
    return tf.format_response(prediction, accept)
