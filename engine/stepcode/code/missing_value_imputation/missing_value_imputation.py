"""Fill missing values.

Reads input_data (/opt/ml/processing/input/data): each sub-folder holding CSV/TSV/Parquet files is one split
(train/, val/, test/, or <job_type>/); files at the top form the split named by --job_type.

--job_type training fits one fill value per column on the train split (all rows when there is none):
  numeric columns      DEFAULT_NUMERICAL_STRATEGY: mean, median, zero or constant (0)
  categorical columns  DEFAULT_CATEGORICAL_STRATEGY: mode or constant (CATEGORICAL_CONSTANT_VALUE)
  text columns         DEFAULT_TEXT_STRATEGY: mode, constant (CATEGORICAL_CONSTANT_VALUE) or empty ("")
(a string column is text when more than half its values are distinct and it has over 100 of them,
categorical otherwise), and writes them to imputation_params (/opt/ml/processing/output/imputation_params/
imputation_params.json). Other job types read that file from the imputation_params input
(/opt/ml/processing/input/imputation_params) instead. LABEL_FIELD and EXCLUDE_COLUMNS (comma-separated) are
never filled.

Writes every split, filled, to processed_data (/opt/ml/processing/output/data)/<split>/
<split>_processed_data.<ext> in the input's format.
"""
import argparse
import json
import os

import pandas as pd

INPUT_PATHS = {"input_data": "/opt/ml/processing/input/data",
               "imputation_params": "/opt/ml/processing/input/imputation_params"}
OUTPUT_PATHS = {"processed_data": "/opt/ml/processing/output/data",
                "imputation_params": "/opt/ml/processing/output/imputation_params"}
ENV_DEFAULTS = {"DEFAULT_NUMERICAL_STRATEGY": "mean", "DEFAULT_CATEGORICAL_STRATEGY": "mode",
                "DEFAULT_TEXT_STRATEGY": "mode", "CATEGORICAL_CONSTANT_VALUE": "Unknown", "EXCLUDE_COLUMNS": ""}
PARAMS_FILE = "imputation_params.json"


def read_splits(directory, default_split):
    """{split: (DataFrame, extension)}: each sub-folder with data files is a split, top-level files default_split."""
    groups = {}
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            base = name[:-3] if name.endswith(".gz") else name
            if name.startswith(".") or not base.endswith((".csv", ".tsv", ".parquet")):
                continue
            rel = os.path.relpath(root, directory)
            split = default_split if rel == "." else rel.split(os.sep)[0]
            groups.setdefault(split, []).append(os.path.join(root, name))
    if not groups:
        raise SystemExit(f"no .csv, .tsv or .parquet file under {directory}")
    return {split: (pd.concat([read_file(p) for p in paths], ignore_index=True), extension(paths[0]))
            for split, paths in groups.items()}


def extension(path):
    base = path[:-3] if path.endswith(".gz") else path
    return base.rsplit(".", 1)[-1]


def read_file(path):
    ext = extension(path)
    if ext == "parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="\t" if ext == "tsv" else ",")


def write_split(df, out_dir, split, ext):
    folder = os.path.join(out_dir, split)
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, f"{split}_processed_data.{ext}")
    if ext == "parquet":
        df.to_parquet(target, index=False)
    else:
        df.to_csv(target, sep="\t" if ext == "tsv" else ",", index=False)


def is_text(series):
    values = series.dropna().astype(str)
    distinct = values.nunique()
    return distinct > 100 and distinct > len(values) / 2


def mode(series, fallback):
    m = series.dropna().mode()
    return m.iloc[0] if len(m) else fallback


def fit(df, skip, env):
    """{column: {"kind", "strategy", "value"}} for every column not in skip."""
    constant = env.get("CATEGORICAL_CONSTANT_VALUE", "Unknown")
    params = {}
    for col in df.columns:
        if col in skip:
            continue
        s = df[col]
        if pd.api.types.is_numeric_dtype(s):
            strategy = env.get("DEFAULT_NUMERICAL_STRATEGY", "mean")
            if strategy == "mean":
                value = s.mean()
            elif strategy == "median":
                value = s.median()
            elif strategy in ("zero", "constant"):
                value = 0.0
            else:
                raise SystemExit(f"DEFAULT_NUMERICAL_STRATEGY {strategy!r} is not one of mean, median, zero, constant")
            value = 0.0 if pd.isna(value) else float(value)
            kind = "numerical"
        else:
            kind = "text" if is_text(s) else "categorical"
            strategy = env.get("DEFAULT_TEXT_STRATEGY" if kind == "text" else "DEFAULT_CATEGORICAL_STRATEGY", "mode")
            if strategy == "mode":
                value = str(mode(s, constant))
            elif strategy == "constant":
                value = constant
            elif strategy == "empty" and kind == "text":
                value = ""
            else:
                raise SystemExit(f"{strategy!r} is not a fill rule for {kind} column {col!r}")
        params[col] = {"kind": kind, "strategy": strategy, "value": value}
    return params


def load_params(directory):
    for root, dirs, files in os.walk(directory or ""):
        if PARAMS_FILE in files:
            with open(os.path.join(root, PARAMS_FILE)) as f:
                return json.load(f)
    raise SystemExit(f"no {PARAMS_FILE} under {directory}: a non-training job type needs the imputation_params "
                     "output of the training MissingValueImputation step as its imputation_params input")


def apply(df, params):
    df = df.copy()
    for col, p in params.items():
        if col in df.columns and df[col].isna().any():
            df[col] = df[col].fillna(p["value"])
    return df


def main(input_paths, output_paths, environ_vars, job_args):
    label = environ_vars["LABEL_FIELD"]
    job_type = getattr(job_args, "job_type", None) or "training"
    skip = {label} | {c.strip() for c in environ_vars.get("EXCLUDE_COLUMNS", "").split(",") if c.strip()}
    splits = read_splits(input_paths["input_data"], job_type)

    if job_type == "training":
        basis = splits["train"][0] if "train" in splits else pd.concat([df for df, _ in splits.values()])
        params = fit(basis, skip, environ_vars)
    else:
        params = load_params(input_paths.get("imputation_params"))
    os.makedirs(output_paths["imputation_params"], exist_ok=True)
    with open(os.path.join(output_paths["imputation_params"], PARAMS_FILE), "w") as f:
        json.dump(params, f, indent=2, sort_keys=True)

    for split, (df, ext) in splits.items():
        missing = int(df.isna().sum().sum())
        df = apply(df, params)
        write_split(df, output_paths["processed_data"], split, ext)
        print(f"{split}: {len(df)} rows, {missing - int(df.isna().sum().sum())} cell(s) filled")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="training")
    args = parser.parse_args()
    if not os.environ.get("LABEL_FIELD"):
        raise SystemExit("LABEL_FIELD is not set: the step's label_field names the label column")
    env = {"LABEL_FIELD": os.environ["LABEL_FIELD"]}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main(INPUT_PATHS, OUTPUT_PATHS, env, args)
