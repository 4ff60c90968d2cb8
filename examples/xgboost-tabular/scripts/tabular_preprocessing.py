"""Clean tabular data: drop rows without a label, cast the label, split into train/val/test (training) or keep one split."""
import argparse
import csv
import os
import random

INPUT_DATA = "/opt/ml/processing/input/data"
OUTPUT = "/opt/ml/processing/output"


def read_rows(directory):
    header, rows = None, []
    for root, _, files in sorted(os.walk(directory)):
        for name in sorted(files):
            if name.endswith(".csv"):
                with open(os.path.join(root, name), newline="") as f:
                    reader = csv.DictReader(f)
                    header = header or reader.fieldnames
                    rows.extend(reader)
    return header or [], rows


def write(path, header, rows, delim):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, delimiter=delim)
        w.writeheader()
        w.writerows(rows)


def main(input_paths, output_paths, environ_vars, job_args):
    label = environ_vars["LABEL_FIELD"]
    header, rows = read_rows(input_paths["input_data"])
    if label not in header:
        raise SystemExit(f"label field {label!r} not in columns {header}")
    rows = [r for r in rows if r.get(label, "") != ""]
    for r in rows:
        r[label] = str(int(float(r[label])))
    numeric = [c for c in environ_vars.get("NUMERICAL_COLUMNS", "").split(",") if c]
    for r in rows:
        for c in numeric:
            r[c] = str(float(r[c])) if r.get(c) not in (None, "") else ""
    delim = "\t" if environ_vars.get("OUTPUT_FORMAT", "CSV").upper() == "TSV" else ","
    out = output_paths["processed_data"]
    if job_args.job_type == "training":
        random.Random(42).shuffle(rows)
        n_train = int(len(rows) * float(environ_vars.get("TRAIN_RATIO", "0.7")))
        rest = rows[n_train:]
        n_test = int(len(rest) * float(environ_vars.get("TEST_VAL_RATIO", "0.5")))
        splits = {"train": rows[:n_train], "test": rest[:n_test], "val": rest[n_test:]}
    else:
        splits = {job_args.job_type: rows}
    for split, part in splits.items():
        write(os.path.join(out, split, f"{split}_processed_data.csv"), header, part, delim)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", required=True)
    args = parser.parse_args()
    env = {"LABEL_FIELD": os.environ["LABEL_FIELD"]}
    for key, default in (("TRAIN_RATIO", "0.7"), ("TEST_VAL_RATIO", "0.5"), ("OUTPUT_FORMAT", "CSV"),
                         ("CATEGORICAL_COLUMNS", ""), ("NUMERICAL_COLUMNS", "")):
        env[key] = os.environ.get(key, default)
    main({"input_data": INPUT_DATA}, {"processed_data": OUTPUT}, env, args)
