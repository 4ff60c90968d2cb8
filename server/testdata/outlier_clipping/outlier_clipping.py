"""Clip the listed numeric columns of every CSV split to quantile bounds."""
import csv
import os


def main(input_paths, output_paths, environ_vars, job_args):
    columns = [c for c in environ_vars.get("CLIP_COLUMNS", "").split(",") if c]
    q = float(environ_vars.get("CLIP_QUANTILE", "0.99"))
    src, dst = input_paths["input_data"], output_paths["processed_data"]
    for root, _, names in os.walk(src):
        for name in names:
            if not name.endswith(".csv"):
                continue
            with open(os.path.join(root, name), newline="") as f:
                rows = list(csv.DictReader(f))
            for col in columns:
                values = sorted(float(r[col]) for r in rows if r.get(col))
                if not values:
                    continue
                lo, hi = values[int((1 - q) * (len(values) - 1))], values[int(q * (len(values) - 1))]
                for r in rows:
                    if r.get(col):
                        r[col] = str(min(max(float(r[col]), lo), hi))
            out = os.path.join(dst, os.path.relpath(root, src))
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, name), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else [])
                w.writeheader()
                w.writerows(rows)
