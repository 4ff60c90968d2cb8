"""Down-sample processed data per stratum.

Reads input_data (/opt/ml/processing/input/data): each sub-folder holding CSV/TSV/Parquet files is one split
(train/, val/, test/ from a training preprocessing; <job_type>/ otherwise); files at the top form the split
named by --job_type. With --job_type training only train/ is sampled and the other splits are copied as they
are; otherwise the <job_type> split (or every split when there is none of that name) is sampled.

Each stratum (a value of STRATA_COLUMN) gets a share of TARGET_SAMPLE_SIZE rows by SAMPLING_STRATEGY:
  balanced               the same number per stratum
  proportional_min       proportional to the stratum's size
  external_proportional  proportional to the stratum's size (no external proportions are read)
  optimal                Neyman allocation: size x standard deviation of VARIANCE_COLUMN
never fewer than MIN_SAMPLES_PER_STRATUM and never more than the stratum has; rows are drawn without
replacement with RANDOM_STATE as the seed.

Writes processed_data (/opt/ml/processing/output)/<split>/<split>_processed_data.<ext>, the input's format.
"""
import argparse
import os

import numpy as np
import pandas as pd

INPUT_PATHS = {"input_data": "/opt/ml/processing/input/data"}
OUTPUT_PATHS = {"processed_data": "/opt/ml/processing/output"}
ENV_DEFAULTS = {"SAMPLING_STRATEGY": "balanced", "TARGET_SAMPLE_SIZE": "1000", "MIN_SAMPLES_PER_STRATUM": "10",
                "VARIANCE_COLUMN": "", "RANDOM_STATE": "42"}
STRATEGIES = ("balanced", "proportional_min", "optimal", "external_proportional")


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


def allocate(sizes, weights, target, floor):
    """Rows per stratum: target shared by weights, at least floor, at most the stratum's size."""
    total = sum(weights.values())
    alloc = {}
    for stratum, size in sizes.items():
        share = target * weights[stratum] / total if total > 0 else target / len(sizes)
        alloc[stratum] = int(min(size, max(floor, round(share))))
    return alloc


def sample(df, strata, strategy, target, floor, variance_column, seed):
    if strata not in df.columns:
        raise SystemExit(f"STRATA_COLUMN {strata!r} is not a column; columns are {list(df.columns)}")
    groups = dict(list(df.groupby(strata, dropna=False)))
    sizes = {k: len(g) for k, g in groups.items()}
    if strategy == "balanced":
        weights = {k: 1.0 for k in sizes}
    elif strategy == "optimal":
        if not variance_column or variance_column not in df.columns:
            raise SystemExit(f"the optimal strategy needs VARIANCE_COLUMN naming a numeric column (got {variance_column!r})")
        weights = {}
        for k, g in groups.items():
            sd = pd.to_numeric(g[variance_column], errors="coerce").std()
            weights[k] = sizes[k] * (0.0 if np.isnan(sd) else sd)
    else:
        weights = {k: float(v) for k, v in sizes.items()}
    alloc = allocate(sizes, weights, target, floor)
    parts = [g.sample(n=alloc[k], random_state=seed) for k, g in groups.items()]
    out = pd.concat(parts).sample(frac=1.0, random_state=seed)
    print("sampled " + ", ".join(f"{k}: {alloc[k]}/{sizes[k]}" for k in sizes))
    return out


def main(input_paths, output_paths, environ_vars, job_args):
    strata = environ_vars["STRATA_COLUMN"]
    job_type = getattr(job_args, "job_type", None) or "training"
    strategy = environ_vars.get("SAMPLING_STRATEGY", "balanced")
    if strategy not in STRATEGIES:
        raise SystemExit(f"SAMPLING_STRATEGY {strategy!r} is not one of {', '.join(STRATEGIES)}")
    target = int(environ_vars.get("TARGET_SAMPLE_SIZE", "1000"))
    floor = int(environ_vars.get("MIN_SAMPLES_PER_STRATUM", "10"))
    seed = int(environ_vars.get("RANDOM_STATE", "42"))
    variance_column = environ_vars.get("VARIANCE_COLUMN", "")

    splits = read_splits(input_paths["input_data"], job_type)
    wanted = "train" if job_type == "training" else job_type
    to_sample = [wanted] if wanted in splits else list(splits)
    for split, (df, ext) in splits.items():
        if split in to_sample:
            df = sample(df, strata, strategy, target, floor, variance_column, seed)
        write_split(df, output_paths["processed_data"], split, ext)
        print(f"{split}: {len(df)} rows written")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="training")
    args = parser.parse_args()
    if not os.environ.get("STRATA_COLUMN"):
        raise SystemExit("STRATA_COLUMN is not set: the step's strata_column names the column that defines the strata")
    env = {"STRATA_COLUMN": os.environ["STRATA_COLUMN"]}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main(INPUT_PATHS, OUTPUT_PATHS, env, args)
