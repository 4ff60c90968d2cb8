"""Tabular helpers shared by the built-in model scripts (training, evaluation, inference, serving).

SageMaker ships only a step's own folder, so this module is copied into every folder that imports it;
engine/stepcode's tests keep the copies identical. It needs pandas and numpy (scikit-learn only for
classification_metrics).

- read_table(path, prefer): every CSV/TSV/Parquet/JSON-lines file under a folder as one DataFrame.
- load_hyperparameters(...): hyperparams/hyperparameters.json from the source folder, then the values
  SageMaker passes to this job (hyperparameters.json in /opt/ml/input/config, command-line flags).
- resolve_fields(data, hp): id, label, numeric and categorical fields, from hyperparameters or the data.
- Preprocessor: numeric fields standardised (missing -> the training mean), categorical fields one-hot
  over their most frequent training values (missing or unseen -> all zeros); saved as preprocessing.json.
- ModelBundle: what a model directory holds besides the framework's model file (preprocessing.json,
  hyperparameters.json with the field lists and classes, calibration/calibration.json when packaged),
  and the request/response handling the serving handlers share.
"""
import io
import json
import os
import tarfile

import numpy as np
import pandas as pd

DATA_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".parquet", ".jsonl")


# ---- data files ----

def read_table(path, prefer=None):
    """Read every data file under path (a file or a folder, recursively) into one DataFrame.

    When path holds a sub-folder named prefer (a job type such as "calibration"), only that one is read.
    """
    if prefer and os.path.isdir(os.path.join(path, prefer)):
        path = os.path.join(path, prefer)
    files = [path] if os.path.isfile(path) else sorted(
        os.path.join(root, name) for root, _, names in os.walk(path) for name in names
        if name.lower().endswith(DATA_SUFFIXES) and not name.startswith((".", "_")))
    if not files:
        raise FileNotFoundError("no data files (%s) under %s" % (", ".join(DATA_SUFFIXES), path))
    return pd.concat([_read_file(f) for f in files], ignore_index=True)


def _read_file(name):
    low = name.lower()
    if low.endswith(".parquet"):
        return pd.read_parquet(name)
    if low.endswith(".jsonl"):
        return pd.read_json(name, lines=True)
    sep = "\t" if low.endswith((".tsv", ".tsv.gz")) else ","
    return pd.read_csv(name, sep=sep)


def write_table(frame, folder, stem, fmt="csv"):
    """Write frame to folder/stem.<fmt> (csv, tsv, parquet or json lines); returns the file path."""
    fmt = (fmt or "csv").lower()
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, "%s.%s" % (stem, "jsonl" if fmt == "json" else fmt))
    if fmt == "parquet":
        frame.to_parquet(target, index=False)
    elif fmt == "json":
        frame.to_json(target, orient="records", lines=True)
    else:
        frame.to_csv(target, index=False, sep="\t" if fmt == "tsv" else ",")
    return target


def write_json(obj, folder, name):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        json.dump(obj, f, indent=2, sort_keys=True, default=float)


def extract_model(path, dest):
    """Return the folder holding the model files: path itself, or dest after unpacking model.tar.gz."""
    archive = path if os.path.isfile(path) else os.path.join(path, "model.tar.gz")
    if not os.path.isfile(archive):
        return path
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            name = os.path.normpath(member.name)
            if name.startswith(("/", "..")) or not (member.isfile() or member.isdir()):
                raise ValueError("unsafe member %r in %s" % (member.name, archive))
        tar.extractall(dest)
    return dest


# ---- hyperparameters ----

def decode(value):
    """SageMaker passes every hyperparameter as a string, JSON-encoded by the SDK."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def parse_flags(argv):
    """--key value pairs (how the training toolkit passes hyperparameters) as a dict."""
    out, i = {}, 0
    while i < len(argv):
        if argv[i].startswith("--") and i + 1 < len(argv):
            out[argv[i][2:]] = argv[i + 1]
            i += 2
        else:
            i += 1
    return out


def load_hyperparameters(source_file, sagemaker_file=None, overrides=None, region=None):
    """The Cursus source-folder file first (hyperparameters_<region>.json, hyperparameters.json), then the
    job's own values, which win: a tuning trial's tuned values arrive there and on the command line."""
    hp = {}
    folder = os.path.dirname(source_file) if source_file else ""
    candidates = [os.path.join(folder, "hyperparameters_%s.json" % region)] if region and folder else []
    for name in candidates + [source_file]:
        if name and os.path.isfile(name):
            with open(name) as f:
                hp = json.load(f)
            break
    if sagemaker_file and os.path.isfile(sagemaker_file):
        with open(sagemaker_file) as f:
            job = json.load(f)
        hp.update({k: decode(v) for k, v in job.items() if not k.startswith("sagemaker_")})
    hp.update({k: decode(v) for k, v in (overrides or {}).items()})
    return hp


# ---- fields and labels ----

def resolve_fields(data, hp, id_name=None, label_name=None):
    """Field lists from the hyperparameters, else inferred: numeric columns are tabular fields, the
    others categorical. Configured fields absent from the data are dropped with a note."""
    cols = list(data.columns)
    id_name = hp.get("id_name") or id_name or ("id" if "id" in cols else None)
    label_name = hp.get("label_name") or label_name or "label"
    if label_name not in cols:
        raise ValueError("label field %r is not in the data (columns: %s); set label_name" % (label_name, ", ".join(cols)))
    rest = [c for c in cols if c not in (id_name, label_name)]

    def configured(key, default):
        listed = hp.get(key)
        if listed is None:
            return default
        missing = [c for c in listed if c not in cols]
        if missing:
            print("note: %s fields not in the data, ignored: %s" % (key, ", ".join(missing)))
        return [c for c in listed if c in cols]

    tab = configured("tab_field_list", [c for c in rest if pd.api.types.is_numeric_dtype(data[c])])
    cat = configured("cat_field_list", [c for c in rest if c not in tab and not pd.api.types.is_numeric_dtype(data[c])])
    if not tab and not cat:
        raise ValueError("no feature fields: set tab_field_list or cat_field_list")
    return {"id_name": id_name, "label_name": label_name, "tab_field_list": tab, "cat_field_list": cat,
            "full_field_list": cols, "input_field_list": tab + cat}


def label_text(value):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def resolve_classes(labels, hp):
    """Class values in index order: multiclass_categories, else the sorted distinct labels."""
    if hp.get("multiclass_categories"):
        return [label_text(c) for c in hp["multiclass_categories"]]
    values = {label_text(v) for v in labels if label_text(v) is not None}
    try:
        return sorted(values, key=float)
    except ValueError:
        return sorted(values)


def encode_labels(labels, classes):
    """Class index per row (-1 where the label is missing or not a known class)."""
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index.get(label_text(v), -1) for v in labels], dtype=np.int64)


# ---- features ----

def _text(series):
    return series.map(label_text)


class Preprocessor:
    """Turns records into the numeric matrix every built-in model is trained on."""

    def __init__(self, state):
        self.state = state

    @classmethod
    def fit(cls, data, tab_fields, cat_fields, max_categories=50):
        numeric = {}
        for f in tab_fields:
            col = pd.to_numeric(data[f], errors="coerce")
            mean, std = col.mean(), col.std()
            numeric[f] = [0.0 if pd.isna(mean) else float(mean), 1.0 if pd.isna(std) or std == 0 else float(std)]
        categorical = {f: [v for v in _text(data[f]).value_counts().index[:max_categories]] for f in cat_fields}
        return cls({"numeric": numeric, "categorical": categorical, "tab_field_list": list(tab_fields),
                    "cat_field_list": list(cat_fields)})

    @property
    def feature_names(self):
        names = list(self.state["tab_field_list"])
        for f in self.state["cat_field_list"]:
            names += ["%s=%s" % (f, v) for v in self.state["categorical"][f]]
        return names

    def transform(self, data):
        missing = [f for f in self.state["tab_field_list"] + self.state["cat_field_list"] if f not in data.columns]
        if missing:
            raise ValueError("input lacks the model's fields: %s" % ", ".join(missing))
        parts = []
        for f in self.state["tab_field_list"]:
            mean, std = self.state["numeric"][f]
            col = pd.to_numeric(data[f], errors="coerce").fillna(mean)
            parts.append(((col - mean) / std).to_numpy(dtype=np.float64)[:, None])
        for f in self.state["cat_field_list"]:
            values = _text(data[f]).to_numpy()
            known = self.state["categorical"][f]
            parts.append(np.stack([values == v for v in known], axis=1).astype(np.float64) if known
                         else np.zeros((len(data), 0)))
        return np.hstack(parts).astype(np.float32)

    def save(self, folder):
        write_json(self.state, folder, "preprocessing.json")

    @classmethod
    def load(cls, folder):
        with open(os.path.join(folder, "preprocessing.json")) as f:
            return cls(json.load(f))


# ---- metrics ----

def classification_metrics(y, probs):
    """auc_roc and friends for class indices y and a probability matrix (rows without a label dropped)."""
    from sklearn import metrics

    keep = y >= 0
    y, probs = y[keep], probs[keep]
    n_classes = probs.shape[1]
    out = {"count": int(len(y))}
    if len(y) == 0:
        return out
    pred = probs.argmax(axis=1)
    out["accuracy"] = float(metrics.accuracy_score(y, pred))
    out["log_loss"] = float(metrics.log_loss(y, np.clip(probs, 1e-7, 1 - 1e-7), labels=list(range(n_classes))))
    if n_classes == 2:
        out["positive_rate"] = float(y.mean())
        out["f1_score"] = float(metrics.f1_score(y, pred, zero_division=0))
        out["precision"] = float(metrics.precision_score(y, pred, zero_division=0))
        out["recall"] = float(metrics.recall_score(y, pred, zero_division=0))
        if len(set(y)) == 2:
            out["auc_roc"] = float(metrics.roc_auc_score(y, probs[:, 1]))
            out["average_precision"] = float(metrics.average_precision_score(y, probs[:, 1]))
    else:
        out["f1_score"] = float(metrics.f1_score(y, pred, average="macro", zero_division=0))
        if len(set(y)) == n_classes:
            out["auc_roc"] = float(metrics.roc_auc_score(y, probs, multi_class="ovr", labels=list(range(n_classes))))
    return out


def class_probabilities(raw, n_classes):
    """A framework's binary output (one score per row) as an (n, 2) matrix; multi-class unchanged."""
    raw = np.asarray(raw, dtype=np.float64)
    if raw.ndim == 1 or raw.shape[1] == 1:
        p = raw.reshape(-1)
        return np.column_stack([1 - p, p])
    return raw.reshape(len(raw), n_classes)


def prediction_frame(data, probs, id_name, label_name):
    """id and label (when present) of each record with its prob_class_<i> columns."""
    out = pd.DataFrame({c: data[c].to_numpy() for c in (id_name, label_name) if c and c in data.columns})
    for i in range(probs.shape[1]):
        out["prob_class_%d" % i] = probs[:, i]
    return out


# ---- the model directory and serving ----

class ModelBundle:
    """The field lists, preprocessing and optional calibration stored next to a model file."""

    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "hyperparameters.json")) as f:
            self.hp = json.load(f)
        self.prep = Preprocessor.load(model_dir)
        self.classes = self.hp["classes"]
        self.calibration = None
        calib = os.path.join(model_dir, "calibration", "calibration.json")
        if os.path.isfile(calib):
            with open(calib) as f:
                self.calibration = json.load(f)

    @staticmethod
    def save(model_dir, hp, prep):
        write_json(hp, model_dir, "hyperparameters.json")
        prep.save(model_dir)

    def frame(self, data):
        """Name the columns of a request: rows carry the input fields in order, or every field of the
        training data (optionally without its first one or two, as a transform input filter drops them).
        Named records (JSON objects) may leave fields out: they are missing values.
        Returns the records and whether a first row naming the fields (a header) was taken off."""
        inputs = self.hp["input_field_list"]
        if all(isinstance(c, str) for c in data.columns) and set(inputs) & set(data.columns):
            return data.reindex(columns=list(data.columns) + [c for c in inputs if c not in data.columns]), False
        full = self.hp["full_field_list"]
        layouts = [inputs, full, [c for c in full if c not in (self.hp.get("id_name"), self.hp["label_name"])],
                   full[1:], full[2:]]
        for names in layouts:
            if len(names) == data.shape[1]:
                data = data.set_axis(names, axis=1)
                if len(data) and set(inputs) <= {str(v) for v in data.iloc[0]}:
                    return data.iloc[1:], True
                return data, False
        raise ValueError("expected %d values per record (%s), got %d" % (len(inputs), ", ".join(inputs), data.shape[1]))

    def matrix(self, data):
        return self.prep.transform(self.frame(data)[0])

    def serve(self, data, score):
        """predict_fn's work: calibrated class probabilities of the records (score(records, self) gives the
        raw ones). A header row is answered with a row of NaN, which format_response writes as the score
        columns' names: a transform's output keeps one line per input line, and a header."""
        records, header = self.frame(data)
        probs = self.calibrate(score(records, self)) if len(records) else np.zeros((0, len(self.classes)))
        return np.vstack([np.full((1, probs.shape[1]), np.nan), probs]) if header else probs

    def calibrate(self, probs):
        """Apply calibration/calibration.json: per class, a piecewise-linear map of the score."""
        if not self.calibration:
            return probs
        out = probs.copy()
        for entry in self.calibration["classes"]:
            i = entry["class_index"]
            out[:, i] = np.interp(probs[:, i], entry["x"], entry["y"])
        if out.shape[1] > 2:
            out = out / np.clip(out.sum(axis=1, keepdims=True), 1e-12, None)
        elif out.shape[1] == 2:
            out[:, 0] = 1 - out[:, 1]
        return out


def parse_request(body, content_type):
    """text/csv (rows without a header) or application/json (records, rows, or {"instances": ...})."""
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8")
    ctype = (content_type or "text/csv").split(";")[0].strip().lower()
    if ctype == "text/csv":
        return pd.read_csv(io.StringIO(body), header=None, dtype=str)
    if ctype in ("application/json", "application/jsonlines"):
        obj = json.loads(body) if ctype == "application/json" else [json.loads(l) for l in body.splitlines() if l.strip()]
        if isinstance(obj, dict):
            for key in ("instances", "inputs", "data"):
                if key in obj:
                    obj = obj[key]
                    break
            else:
                obj = [obj]
        if obj and isinstance(obj[0], dict):
            return pd.DataFrame.from_records(obj)
        return pd.DataFrame(obj)
    raise ValueError("unsupported content type %r: send text/csv or application/json" % content_type)


def format_response(probs, accept):
    """The response body: text/csv (the default) has one score per line for a binary model (class 1),
    else comma-joined class probabilities; application/json has {"predictions": [...]} of the same. A row
    of NaN (a request's header) is the score columns' names in CSV, null in JSON."""
    binary = probs.shape[1] == 2
    rows = probs[:, 1:] if binary else probs
    if "json" in (accept or ""):
        return json.dumps({"predictions": [None if np.isnan(r).all() else (float(r[0]) if binary else r.tolist())
                                           for r in rows]})
    names = ["prob_class_%d" % i for i in range(probs.shape[1])][-rows.shape[1]:]
    return "".join(",".join(names if np.isnan(r).all() else ["%.8g" % v for v in r]) + "\n" for r in rows)
