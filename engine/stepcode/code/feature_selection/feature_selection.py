"""Select features by ensemble voting.

Reads input_data (/opt/ml/processing/input/data): each sub-folder holding CSV/TSV/Parquet files is one split
(train/, val/, test/, or <job_type>/); files at the top form the split named by --job_type.

The candidates are the numeric columns other than LABEL_FIELD and an `id` column; other columns are kept
untouched. --job_type training scores the candidates on the train split (all rows when there is none;
missing cells filled with the column median for scoring) with every method in FEATURE_SELECTION_METHODS
(comma-separated): variance, correlation, mutual_info, chi2, f_test, rfe, feature_importance, lasso,
permutation. Each method ranks the candidates; a feature's score is its mean normalised rank (1 = best every
time). variance drops features whose variance is below VARIANCE_THRESHOLD; correlation drops the weaker of
each pair correlated above CORRELATION_THRESHOLD. The N_FEATURES_TO_SELECT best survivors are kept and
written to selected_features (/opt/ml/processing/output/selected_features/selected_features.json). Other job
types read that file from the selected_features input (/opt/ml/processing/input/selected_features).

Writes every split with the kept columns to processed_data (/opt/ml/processing/output/data)/<split>/
<split>_processed_data.<ext> in the input's format.
"""
import argparse
import json
import os

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.feature_selection import RFE, chi2, f_classif, f_regression, mutual_info_classif, mutual_info_regression
from sklearn.inspection import permutation_importance
from sklearn.linear_model import Lasso, LinearRegression, LogisticRegression
from sklearn.preprocessing import MinMaxScaler, StandardScaler

INPUT_PATHS = {"input_data": "/opt/ml/processing/input/data",
               "selected_features": "/opt/ml/processing/input/selected_features"}
OUTPUT_PATHS = {"processed_data": "/opt/ml/processing/output/data",
                "selected_features": "/opt/ml/processing/output/selected_features"}
ENV_DEFAULTS = {"FEATURE_SELECTION_METHODS": "variance,correlation,mutual_info,rfe", "N_FEATURES_TO_SELECT": "50",
                "CORRELATION_THRESHOLD": "0.95", "VARIANCE_THRESHOLD": "0.01"}
SELECTION_FILE = "selected_features.json"
ID_COLUMN = "id"
SEED = 0


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


def method_scores(method, X, y, classify):
    """Per-feature scores of one method, higher is better."""
    Xs = StandardScaler().fit_transform(X)
    if method == "variance":
        return X.var().to_numpy()
    if method == "correlation":
        return X.corrwith(y).abs().fillna(0).to_numpy()
    if method == "mutual_info":
        fn = mutual_info_classif if classify else mutual_info_regression
        return fn(X, y, random_state=SEED)
    if method == "chi2":
        if not classify:
            return None
        return np.nan_to_num(chi2(MinMaxScaler().fit_transform(X), y)[0])
    if method == "f_test":
        return np.nan_to_num((f_classif if classify else f_regression)(X, y)[0])
    if method == "rfe":
        model = LogisticRegression(max_iter=1000) if classify else LinearRegression()
        return -RFE(model, n_features_to_select=1).fit(Xs, y).ranking_.astype(float)
    if method == "lasso":
        if classify:
            model = LogisticRegression(penalty="l1", solver="liblinear", C=0.1, random_state=SEED).fit(Xs, y)
            return np.abs(model.coef_).sum(axis=0)
        return np.abs(Lasso(alpha=0.01, random_state=SEED).fit(Xs, y).coef_)
    if method in ("feature_importance", "permutation"):
        forest = (RandomForestClassifier if classify else RandomForestRegressor)(n_estimators=100, random_state=SEED)
        forest.fit(X, y)
        if method == "feature_importance":
            return forest.feature_importances_
        return permutation_importance(forest, X, y, n_repeats=5, random_state=SEED).importances_mean
    raise SystemExit(f"unknown feature selection method {method!r}")


def select(df, label, candidates, env):
    methods = [m.strip() for m in env.get("FEATURE_SELECTION_METHODS", "").split(",") if m.strip()]
    if not methods:
        raise SystemExit("FEATURE_SELECTION_METHODS names no method")
    X = df[candidates].astype(float)
    X = X.fillna(X.median()).fillna(0)
    y = pd.to_numeric(df[label], errors="coerce").fillna(0)
    classify = y.nunique() <= 20 and bool((y == y.round()).all())
    if classify:
        y = y.astype(int)

    dropped = set()
    if "variance" in methods:
        threshold = float(env.get("VARIANCE_THRESHOLD", "0.01"))
        dropped |= {c for c, v in X.var().items() if v < threshold}
    if "correlation" in methods:
        threshold = float(env.get("CORRELATION_THRESHOLD", "0.95"))
        strength = X.corrwith(y).abs().fillna(0)
        corr = X.corr().abs()
        for i, a in enumerate(candidates):
            for b in candidates[i + 1:]:
                if corr.loc[a, b] > threshold:
                    dropped.add(a if strength[a] < strength[b] else b)

    ranks = []
    for method in methods:
        scores = method_scores(method, X, y, classify)
        if scores is not None:
            ranks.append(pd.Series(scores, index=candidates).rank(pct=True))
    score = pd.concat(ranks, axis=1).mean(axis=1) if ranks else pd.Series(1.0, index=candidates)
    survivors = score.drop(labels=sorted(dropped)).sort_values(ascending=False, kind="stable")
    keep = list(survivors.index[:int(env.get("N_FEATURES_TO_SELECT", "50"))])
    return {"selected_features": keep, "dropped_by_filters": sorted(dropped), "methods": methods,
            "task": "classification" if classify else "regression",
            "scores": {c: round(float(s), 6) for c, s in score.items()}}


def load_selection(directory):
    for root, dirs, files in os.walk(directory or ""):
        if SELECTION_FILE in files:
            with open(os.path.join(root, SELECTION_FILE)) as f:
                return json.load(f)
    raise SystemExit(f"no {SELECTION_FILE} under {directory}: a non-training job type needs the selected_features "
                     "output of the training FeatureSelection step as its selected_features input")


def main(input_paths, output_paths, environ_vars, job_args):
    label = environ_vars["LABEL_FIELD"]
    job_type = getattr(job_args, "job_type", None) or "training"
    splits = read_splits(input_paths["input_data"], job_type)

    if job_type == "training":
        basis = splits["train"][0] if "train" in splits else pd.concat([df for df, _ in splits.values()])
        if label not in basis.columns:
            raise SystemExit(f"LABEL_FIELD {label!r} is not a column; columns are {list(basis.columns)}")
        candidates = [c for c in basis.columns
                      if c not in (label, ID_COLUMN) and pd.api.types.is_numeric_dtype(basis[c])]
        if not candidates:
            raise SystemExit("no numeric feature column to select from")
        selection = select(basis, label, candidates, environ_vars)
        selection["candidates"] = candidates
    else:
        selection = load_selection(input_paths.get("selected_features"))
    os.makedirs(output_paths["selected_features"], exist_ok=True)
    with open(os.path.join(output_paths["selected_features"], SELECTION_FILE), "w") as f:
        json.dump(selection, f, indent=2)
    print(f"selected {selection['selected_features']}")

    candidates, keep = set(selection["candidates"]), set(selection["selected_features"])
    for split, (df, ext) in splits.items():
        columns = [c for c in df.columns if c not in candidates or c in keep]
        write_split(df[columns], output_paths["processed_data"], split, ext)
        print(f"{split}: {len(df)} rows, {len(columns)} columns")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", default="training")
    args = parser.parse_args()
    if not os.environ.get("LABEL_FIELD"):
        raise SystemExit("LABEL_FIELD is not set: the step's label_field names the label column")
    env = {"LABEL_FIELD": os.environ["LABEL_FIELD"]}
    env.update({k: os.environ.get(k, d) for k, d in ENV_DEFAULTS.items()})
    main(INPUT_PATHS, OUTPUT_PATHS, env, args)
