"""Load an existing tabular dataset into the pipeline.

Reads every CSV, TSV or Parquet file under the data_source input (/opt/ml/processing/input/data, searched
recursively, each file with a header row) and writes:
  data_output      /opt/ml/processing/output/data       the rows, as part-00000.<ext> (or several shards of
                                                        SHARD_SIZE rows when WRITE_DATA_SHARDS=true), in
                                                        OUTPUT_FORMAT (CSV, TSV or Parquet)
  metadata_output  /opt/ml/processing/output/metadata   metadata.json: job type, row count, column names and types
  signature        /opt/ml/processing/output/signature  signature: the ordered column names, comma-separated
Job argument: --job_type (training, validation, testing, calibration, ...), recorded in the metadata.
"""
import argparse
import json
import os

import pandas as pd

INPUT_PATHS = {"data_source": "/opt/ml/processing/input/data"}
OUTPUT_PATHS = {
    "data_output": "/opt/ml/processing/output/data",
    "metadata_output": "/opt/ml/processing/output/metadata",
    "signature": "/opt/ml/processing/output/signature",
}
ENV_DEFAULTS = {"WRITE_DATA_SHARDS": "false", "SHARD_SIZE": "10000", "OUTPUT_FORMAT": "CSV"}
EXTENSIONS = {"CSV": "csv", "TSV": "tsv", "PARQUET": "parquet"}


def data_files(directory):
    """The data files under directory, in a stable order."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            base = name[:-3] if name.endswith(".gz") else name
            if base.endswith((".csv", ".tsv", ".parquet")) and not name.startswith("."):
                found.append(os.path.join(root, name))
    return found


def read_file(path):
    base = path[:-3] if path.endswith(".gz") else path
    if base.endswith(".parquet"):
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="\t" if base.endswith(".tsv") else ",")


def write_table(df, path, fmt):
    if fmt == "PARQUET":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, sep="\t" if fmt == "TSV" else ",", index=False)


def column_type(series):
    if pd.api.types.is_bool_dtype(series):
        return "bool"
    if pd.api.types.is_integer_dtype(series):
        return "int"
    if pd.api.types.is_numeric_dtype(series):
        return "float"
    return "string"


def main(input_paths, output_paths, environ_vars, job_args):
    source = input_paths["data_source"]
    files = data_files(source)
    if not files:
        raise SystemExit(f"no .csv, .tsv or .parquet file under {source}: point data_source at the dataset's S3 prefix")
    df = pd.concat([read_file(f) for f in files], ignore_index=True)

    fmt = environ_vars.get("OUTPUT_FORMAT", "CSV").upper()
    if fmt not in EXTENSIONS:
        raise SystemExit(f"OUTPUT_FORMAT {fmt!r} is not one of CSV, TSV, Parquet")
    shard = environ_vars.get("WRITE_DATA_SHARDS", "false").lower() == "true"
    size = max(1, int(environ_vars.get("SHARD_SIZE", "10000")))
    for out in output_paths.values():
        os.makedirs(out, exist_ok=True)

    starts = range(0, max(len(df), 1), size) if shard else [0]
    for i, start in enumerate(starts):
        part = df.iloc[start:start + size] if shard else df
        write_table(part, os.path.join(output_paths["data_output"], f"part-{i:05d}.{EXTENSIONS[fmt]}"), fmt)

    metadata = {
        "job_type": job_args.job_type,
        "row_count": int(len(df)),
        "source_files": [os.path.relpath(f, source) for f in files],
        "columns": [{"name": str(c), "type": column_type(df[c])} for c in df.columns],
    }
    with open(os.path.join(output_paths["metadata_output"], "metadata.json"), "w") as f:
        json.dump(metadata, f, indent=2)
    with open(os.path.join(output_paths["signature"], "signature"), "w") as f:
        f.write(",".join(str(c) for c in df.columns) + "\n")
    print(f"loaded {len(df)} rows, {len(df.columns)} columns from {len(files)} file(s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="training")
    args = parser.parse_args()
    env = {k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()}
    main(INPUT_PATHS, OUTPUT_PATHS, env, args)
