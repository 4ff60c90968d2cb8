"""Replace categorical values by their smoothed label risk.

Reads input_data (/opt/ml/processing/input/data): each sub-folder holding CSV/TSV/Parquet files is one split
(train/, val/, test/, or <job_type>/); files at the top form the split named by --job_type.

The fields mapped are CAT_FIELD_LIST (comma-separated), else cat_field_list from hyperparameters.json in the
optional hyperparameters input (/opt/ml/processing/input/config), else every string column. The risk is the
share of rows whose label is non-zero (for a 0/1 label: the positive rate).

--job_type training fits one table per field on the train split (all rows when there is none): a value seen
n times with risk r maps to (n*r + m*g) / (n + m), g the overall risk and m = SMOOTH_FACTOR x rows; values
seen fewer than COUNT_THRESHOLD times, unseen values and missing cells map to g. The tables go to risk_tables
(/opt/ml/processing/output/risk_tables/risk_tables.json). Other job types read that file from the risk_tables
input (/opt/ml/processing/input/risk_tables).

Writes every split, mapped, to processed_data (/opt/ml/processing/output/data)/<split>/
<split>_processed_data.<ext> in the input's format.
"""
import argparse
import json
import os

import pandas as pd

INPUT_PATHS = {"input_data": "/opt/ml/processing/input/data",
               "hyperparameters_s3_uri": "/opt/ml/processing/input/config",
               "risk_tables": "/opt/ml/processing/input/risk_tables"}
OUTPUT_PATHS = {"processed_data": "/opt/ml/processing/output/data",
                "risk_tables": "/opt/ml/processing/output/risk_tables"}
ENV_DEFAULTS = {"SMOOTH_FACTOR": "0.01", "COUNT_THRESHOLD": "5", "CAT_FIELD_LIST": ""}
TABLES_FILE = "risk_tables.json"


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
    """A list from a comma-separated string or a JSON list."""
    if isinstance(value, list):
        return [str(v) for v in value]
    value = (value or "").strip()
    if value.startswith("["):
        return [str(v) for v in json.loads(value)]
    return [v.strip() for v in value.split(",") if v.strip()]


def read_hyperparameters(directory):
    for root, dirs, files in os.walk(directory or ""):
        for name in sorted(files):
            if name.endswith(".json"):
                with open(os.path.join(root, name)) as f:
                    return json.load(f)
    return {}


def fit(df, label, fields, smooth_factor, count_threshold):
    target = (pd.to_numeric(df[label], errors="coerce").fillna(0) != 0).astype(float)
    overall = float(target.mean()) if len(target) else 0.0
    smooth = int(len(df) * smooth_factor)
    tables = {}
    for col in fields:
        keys = df[col].astype(str).where(df[col].notna())
        stats = target.groupby(keys).agg(["sum", "count"])
        bins = {}
        for value, row in stats.iterrows():
            if row["count"] >= count_threshold:
                bins[str(value)] = float((row["sum"] + smooth * overall) / (row["count"] + smooth))
        tables[col] = {"default": overall, "bins": bins}
    return {"label": label, "overall_risk": overall, "smooth_samples": smooth, "fields": tables}


def apply(df, tables):
    df = df.copy()
    for col, table in tables["fields"].items():
        if col in df.columns:
            keys = df[col].astype(str).where(df[col].notna())
            df[col] = keys.map(table["bins"]).fillna(table["default"]).astype(float)
    return df


def load_tables(directory):
    for root, dirs, files in os.walk(directory or ""):
        if TABLES_FILE in files:
            with open(os.path.join(root, TABLES_FILE)) as f:
                return json.load(f)
    raise SystemExit(f"no {TABLES_FILE} under {directory}: a non-training job type needs the risk_tables output "
                     "of the training RiskTableMapping step as its risk_tables input")


def main(input_paths, output_paths, environ_vars, job_args):
    label = environ_vars["LABEL_FIELD"]
    job_type = getattr(job_args, "job_type", None) or "training"
    splits = read_splits(input_paths["input_data"], job_type)

    if job_type == "training":
        basis = splits["train"][0] if "train" in splits else pd.concat([df for df, _ in splits.values()])
        if label not in basis.columns:
            raise SystemExit(f"LABEL_FIELD {label!r} is not a column; columns are {list(basis.columns)}")
        hyperparameters = read_hyperparameters(input_paths.get("hyperparameters_s3_uri"))
        fields = field_list(environ_vars.get("CAT_FIELD_LIST")) or field_list(hyperparameters.get("cat_field_list"))
        if not fields:
            fields = [c for c in basis.columns if c != label and not pd.api.types.is_numeric_dtype(basis[c])]
        unknown = [c for c in fields if c not in basis.columns]
        if unknown:
            raise SystemExit(f"categorical field(s) {unknown} are not columns; columns are {list(basis.columns)}")
        tables = fit(basis, label, [c for c in fields if c != label],
                     float(environ_vars.get("SMOOTH_FACTOR", "0.01")), int(environ_vars.get("COUNT_THRESHOLD", "5")))
    else:
        tables = load_tables(input_paths.get("risk_tables"))
    os.makedirs(output_paths["risk_tables"], exist_ok=True)
    with open(os.path.join(output_paths["risk_tables"], TABLES_FILE), "w") as f:
        json.dump(tables, f, indent=2, sort_keys=True)
    print(f"risk tables for {sorted(tables['fields'])}")

    for split, (df, ext) in splits.items():
        write_split(apply(df, tables), output_paths["processed_data"], split, ext)
        print(f"{split}: {len(df)} rows mapped")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="training")
    args = parser.parse_args()
    if not os.environ.get("LABEL_FIELD"):
        raise SystemExit("LABEL_FIELD is not set: the step's label_field names the label column")
    env = {"LABEL_FIELD": os.environ["LABEL_FIELD"]}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main(INPUT_PATHS, OUTPUT_PATHS, env, args)
