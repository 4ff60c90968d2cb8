"""Tiny processing step for the local run's tests: reads the sample CSV
(id,label,f1,f2) and writes a training split (header, label first), the
records to score (no header, id,label,f1,f2) and payload.tar.gz (f1,f2)."""
import csv, glob, io, os, sys, tarfile

rows = []
for path in sorted(glob.glob("/opt/ml/processing/input/data/*.csv")):
    with open(path) as f:
        rows += list(csv.DictReader(f))
if not rows:
    sys.exit("no input rows")
out = "/opt/ml/processing/output"
for d in ("train", "infer", "payload"):
    os.makedirs(os.path.join(out, d), exist_ok=True)
with open(os.path.join(out, "train", "train.csv"), "w") as f:
    f.write("label,f1,f2\n")
    for r in rows:
        f.write("%s,%s,%s\n" % (r["label"], r["f1"], r["f2"]))
with open(os.path.join(out, "infer", "infer.csv"), "w") as f:
    for r in rows:
        f.write("%s,%s,%s,%s\n" % (r["id"], r["label"], r["f1"], r["f2"]))
data = ("%s,%s\n" % (rows[0]["f1"], rows[0]["f2"])).encode()
with tarfile.open(os.path.join(out, "payload", "payload.tar.gz"), "w:gz") as tar:
    info = tarfile.TarInfo("sample.csv")
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
print("prep wrote", len(rows), "rows; args", sys.argv[1:], "MODE", os.environ.get("MODE"))
