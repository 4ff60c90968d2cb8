"""Load an existing tabular dataset: copy its rows, and write a schema (metadata) and a header (signature)."""
import argparse
import csv
import json
import os

INPUT_DATA = "/opt/ml/processing/input/data"
OUTPUT_DATA = "/opt/ml/processing/output/data"
OUTPUT_METADATA = "/opt/ml/processing/output/metadata"
OUTPUT_SIGNATURE = "/opt/ml/processing/output/signature"


def read_rows(directory):
    header, rows = None, []
    for root, _, files in sorted(os.walk(directory)):
        for name in sorted(files):
            if not name.endswith((".csv", ".tsv")):
                continue
            delim = "\t" if name.endswith(".tsv") else ","
            with open(os.path.join(root, name), newline="") as f:
                reader = csv.reader(f, delimiter=delim)
                file_header = next(reader, None)
                if file_header is None:
                    continue
                header = header or file_header
                rows.extend(reader)
    return header or [], rows


def infer_type(values):
    try:
        for v in values:
            float(v)
        return "numeric"
    except ValueError:
        return "text"


def main(input_paths, output_paths, environ_vars, job_args):
    header, rows = read_rows(input_paths["data_source"])
    shard_size = int(environ_vars.get("SHARD_SIZE", "10000"))
    shard = environ_vars.get("WRITE_DATA_SHARDS", "false").lower() == "true"
    delim = "\t" if environ_vars.get("OUTPUT_FORMAT", "CSV").upper() == "TSV" else ","
    for key in ("data_output", "metadata_output", "signature"):
        os.makedirs(output_paths[key], exist_ok=True)
    chunks = [rows[i:i + shard_size] for i in range(0, len(rows), shard_size)] if shard else [rows]
    for i, chunk in enumerate(chunks or [[]]):
        with open(os.path.join(output_paths["data_output"], f"part-{i:05d}.csv"), "w", newline="") as f:
            w = csv.writer(f, delimiter=delim)
            w.writerow(header)
            w.writerows(chunk)
    schema = [{"name": col, "type": infer_type([r[j] for r in rows if j < len(r)])} for j, col in enumerate(header)]
    with open(os.path.join(output_paths["metadata_output"], "metadata.json"), "w") as f:
        json.dump({"job_type": job_args.job_type, "row_count": len(rows), "columns": schema}, f, indent=2)
    with open(os.path.join(output_paths["signature"], "signature.csv"), "w") as f:
        f.write(",".join(header) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", required=True)
    args = parser.parse_args()
    main(
        {"data_source": INPUT_DATA},
        {"data_output": OUTPUT_DATA, "metadata_output": OUTPUT_METADATA, "signature": OUTPUT_SIGNATURE},
        {k: os.environ.get(k, d) for k, d in (("WRITE_DATA_SHARDS", "false"), ("SHARD_SIZE", "10000"), ("OUTPUT_FORMAT", "CSV"))},
        args,
    )
