"""Convert monetary columns to one currency.

Reads input_data (/opt/ml/processing/input/data): each sub-folder holding CSV/TSV/Parquet files is one split
(train/, val/, test/, or <job_type>/); files at the top form the split named by --job_type.

CURRENCY_CONVERSION_VARS (comma-separated or a JSON list) names the monetary columns and
CURRENCY_CONVERSION_DICT (a JSON object) the rate of each currency, e.g. {"USD": 1.0, "EUR": 1.08}: a value in
currency c becomes value x rate[c]. A row's currency is read from CURRENCY_CODE_FIELD, or from
MARKETPLACE_ID_FIELD when that is set (the dictionary then keyed by marketplace id); when the column is
absent or the cell empty the row is in DEFAULT_CURRENCY, and a currency without a rate keeps its values
(counted in the log). Listed columns the data lacks are reported and skipped.

Writes every split, converted, to processed_data (/opt/ml/processing/output)/<split>/
<split>_processed_data.<ext> in the input's format.
"""
import argparse
import json
import os

import pandas as pd

INPUT_PATHS = {"input_data": "/opt/ml/processing/input/data"}
OUTPUT_PATHS = {"processed_data": "/opt/ml/processing/output"}
ENV_DEFAULTS = {"CURRENCY_CODE_FIELD": "currency_code", "MARKETPLACE_ID_FIELD": "", "DEFAULT_CURRENCY": "USD",
                "N_WORKERS": "4"}


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


def field_list(value):
    value = (value or "").strip()
    if value.startswith("["):
        return [str(v) for v in json.loads(value)]
    return [v.strip() for v in value.split(",") if v.strip()]


def rates_from(value):
    try:
        rates = json.loads(value)
    except json.JSONDecodeError as e:
        raise SystemExit(f"CURRENCY_CONVERSION_DICT is not JSON: {e}")
    if not isinstance(rates, dict):
        raise SystemExit("CURRENCY_CONVERSION_DICT must be a JSON object of currency to rate")
    try:
        return {str(k): float(v) for k, v in rates.items()}
    except (TypeError, ValueError) as e:
        raise SystemExit(f"CURRENCY_CONVERSION_DICT has a rate that is not a number: {e}")


def row_keys(df, key_field, default):
    """The currency (or marketplace) key of every row, as strings."""
    if not key_field or key_field not in df.columns:
        return pd.Series(default, index=df.index)
    keys = df[key_field]
    if pd.api.types.is_float_dtype(keys) and (keys.dropna() == keys.dropna().round()).all():
        keys = keys.astype("Int64")
    keys = keys.astype("string").str.strip()
    return keys.where(keys.notna() & (keys != ""), default).astype(str)


def convert(df, columns, rates, key_field, default):
    df = df.copy()
    keys = row_keys(df, key_field, default)
    factor = keys.map(rates)
    unknown = sorted(keys[factor.isna()].unique())
    if unknown:
        print(f"no rate for {unknown}: {int(factor.isna().sum())} row(s) keep their values")
    factor = factor.fillna(1.0)
    for col in columns:
        df[col] = pd.to_numeric(df[col], errors="coerce") * factor
    return df


def main(input_paths, output_paths, environ_vars, job_args):
    job_type = getattr(job_args, "job_type", None) or "training"
    columns = field_list(environ_vars["CURRENCY_CONVERSION_VARS"])
    rates = rates_from(environ_vars["CURRENCY_CONVERSION_DICT"])
    marketplace = environ_vars.get("MARKETPLACE_ID_FIELD", "")
    key_field = marketplace or environ_vars.get("CURRENCY_CODE_FIELD", "currency_code")
    default = environ_vars.get("DEFAULT_CURRENCY", "USD")
    splits = read_splits(input_paths["input_data"], job_type)
    for split, (df, ext) in splits.items():
        present = [c for c in columns if c in df.columns]
        absent = [c for c in columns if c not in df.columns]
        if absent:
            print(f"{split}: column(s) {absent} not in the data, skipped")
        if key_field not in df.columns:
            print(f"{split}: no {key_field!r} column, every row taken as {default}")
        write_split(convert(df, present, rates, key_field, default), output_paths["processed_data"], split, ext)
        print(f"{split}: {len(df)} rows, converted {present}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="training")
    args = parser.parse_args()
    for name in ("CURRENCY_CONVERSION_VARS", "CURRENCY_CONVERSION_DICT"):
        if name not in os.environ:
            raise SystemExit(f"{name} is not set: the step's {name.lower()} gives it")
    env = {"CURRENCY_CONVERSION_VARS": os.environ["CURRENCY_CONVERSION_VARS"],
           "CURRENCY_CONVERSION_DICT": os.environ["CURRENCY_CONVERSION_DICT"]}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main(INPUT_PATHS, OUTPUT_PATHS, env, args)
