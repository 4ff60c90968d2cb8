"""Clean tabular data and split it.

Reads every CSV, TSV or Parquet file under input_data (/opt/ml/processing/input/data, recursively). When
the optional signature input (/opt/ml/processing/input/signature) holds a header line and the data files
lack the label column, the files are read as headerless with those column names. Rows without a label are
dropped and the label is cast to an integer (0..k-1, in sorted order, when it is not numeric).
CATEGORICAL_COLUMNS are cast to strings and NUMERICAL_COLUMNS to floats (comma-separated lists).

Writes to processed_data (/opt/ml/processing/output):
  --job_type training: train/, val/ and test/ sub-folders (TRAIN_RATIO of the rows for training, then
                       TEST_VAL_RATIO of the rest for test), split stratified by the label
  any other job type:  one <job_type>/ sub-folder with every row
each holding <split>_processed_data.<csv|tsv|parquet> per OUTPUT_FORMAT.
"""
import argparse
import os

import pandas as pd
from sklearn.model_selection import train_test_split

INPUT_PATHS = {
    "input_data": "/opt/ml/processing/input/data",
    "metadata": "/opt/ml/processing/input/metadata",
    "signature": "/opt/ml/processing/input/signature",
}
OUTPUT_PATHS = {"processed_data": "/opt/ml/processing/output"}
ENV_DEFAULTS = {"TRAIN_RATIO": "0.7", "TEST_VAL_RATIO": "0.5", "OUTPUT_FORMAT": "CSV",
                "CATEGORICAL_COLUMNS": "", "NUMERICAL_COLUMNS": ""}
FORMATS = {"CSV": ("csv", ","), "TSV": ("tsv", "\t"), "PARQUET": ("parquet", None)}
SEED = 42


def data_files(directory):
    found = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            base = name[:-3] if name.endswith(".gz") else name
            if base.endswith((".csv", ".tsv", ".parquet")) and not name.startswith("."):
                found.append(os.path.join(root, name))
    return found


def read_file(path, names=None):
    base = path[:-3] if path.endswith(".gz") else path
    if base.endswith(".parquet"):
        return pd.read_parquet(path)
    sep = "\t" if base.endswith(".tsv") else ","
    if names:
        return pd.read_csv(path, sep=sep, header=None, names=names)
    return pd.read_csv(path, sep=sep)


def read_signature(directory):
    """Column names from the first line of the first file under directory, or None."""
    if not directory or not os.path.isdir(directory):
        return None
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            with open(os.path.join(root, name)) as f:
                line = f.readline().strip()
            if line:
                return [c.strip() for c in line.split(",")]
    return None


def split_list(value):
    return [c.strip() for c in (value or "").split(",") if c.strip()]


def encode_label(series):
    numeric = pd.to_numeric(series, errors="coerce")
    if numeric.notna().all():
        return numeric.astype(int)
    classes = sorted(series.astype(str).unique())
    print(f"label values {classes} encoded as 0..{len(classes) - 1}")
    return series.astype(str).map({c: i for i, c in enumerate(classes)}).astype(int)


def split_frame(df, label, train_ratio, test_val_ratio):
    counts = df[label].value_counts()
    stratify = df[label] if len(counts) > 1 and counts.min() >= 2 else None
    train, rest = train_test_split(df, train_size=train_ratio, random_state=SEED, stratify=stratify)
    counts = rest[label].value_counts()
    stratify = rest[label] if len(counts) > 1 and counts.min() >= 2 else None
    test, val = train_test_split(rest, train_size=test_val_ratio, random_state=SEED, stratify=stratify)
    return {"train": train, "val": val, "test": test}


def main(input_paths, output_paths, environ_vars, job_args):
    label = environ_vars["LABEL_FIELD"]
    job_type = getattr(job_args, "job_type", None) or "training"
    files = data_files(input_paths["input_data"])
    if not files:
        raise SystemExit(f"no .csv, .tsv or .parquet file under {input_paths['input_data']}")
    df = pd.concat([read_file(f) for f in files], ignore_index=True)
    signature = read_signature(input_paths.get("signature"))
    if label not in df.columns and signature and label in signature:
        df = pd.concat([read_file(f, names=signature) for f in files], ignore_index=True)
    if label not in df.columns:
        raise SystemExit(f"LABEL_FIELD {label!r} is not a column; columns are {list(df.columns)}")

    before = len(df)
    df = df[df[label].notna() & (df[label].astype(str).str.strip() != "")].copy()
    if before != len(df):
        print(f"dropped {before - len(df)} row(s) without a label")
    if df.empty:
        raise SystemExit(f"no row has a value in {label!r}")
    df[label] = encode_label(df[label])
    for col in split_list(environ_vars.get("CATEGORICAL_COLUMNS")):
        if col in df.columns:
            df[col] = df[col].where(df[col].isna(), df[col].astype(str))
    for col in split_list(environ_vars.get("NUMERICAL_COLUMNS")):
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce")

    fmt = environ_vars.get("OUTPUT_FORMAT", "CSV").upper()
    if fmt not in FORMATS:
        raise SystemExit(f"OUTPUT_FORMAT {fmt!r} is not one of CSV, TSV, Parquet")
    if job_type == "training":
        splits = split_frame(df, label, float(environ_vars.get("TRAIN_RATIO", "0.7")),
                             float(environ_vars.get("TEST_VAL_RATIO", "0.5")))
    else:
        splits = {job_type: df}
    ext, sep = FORMATS[fmt]
    for name, part in splits.items():
        folder = os.path.join(output_paths["processed_data"], name)
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, f"{name}_processed_data.{ext}")
        if sep is None:
            part.to_parquet(target, index=False)
        else:
            part.to_csv(target, sep=sep, index=False)
        print(f"{name}: {len(part)} rows, {int((part[label] == 1).sum())} positive")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="training")
    args = parser.parse_args()
    if not os.environ.get("LABEL_FIELD"):
        raise SystemExit("LABEL_FIELD is not set: the step's label_field names the label column")
    env = {"LABEL_FIELD": os.environ["LABEL_FIELD"]}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main(INPUT_PATHS, OUTPUT_PATHS, env, args)
