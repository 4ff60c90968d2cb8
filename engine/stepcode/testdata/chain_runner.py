"""Test driver: runs a chain of built-in scripts in one interpreter (so pandas, xgboost and torch are
imported once), each step from its own folder with a fresh import of that folder's modules.

argv[1] is a JSON list of steps, each with "name", "log" (file receiving the step's output) and a kind:
  {"kind": "main", "dir", "module", "inputs", "outputs", "env", "args"}: main(...) as validate.run_scripts calls it
  {"kind": "script", "script", "argv", "env"}: the script run as __main__ (script mode), env added to os.environ
  {"kind": "pack", "dir", "archive"}: dir's files as a model.tar.gz, as SageMaker packs /opt/ml/model
  {"kind": "serve", "archive", "payload", "requests", "responses"}: the archive loaded as a framework serving
      container does (code/inference.py inside it) answering every sample of payload.tar.gz and each of
      requests ({"file", "content_type", "body"}); responses -> JSON file of file -> response body
Exits 1 naming the failed step, with its log, at the first failure.
"""
import argparse
import contextlib
import importlib
import json
import os
import runpy
import sys
import tarfile
import tempfile
import traceback

SHARED = ("inference", "tabular_features")


def fresh_import(folder, module):
    for name in SHARED + (module,):
        sys.modules.pop(name, None)
    sys.path.insert(0, folder)
    try:
        return importlib.import_module(module)
    finally:
        sys.path.remove(folder)


def run(step):
    kind = step["kind"]
    if kind == "main":
        mod = fresh_import(step["dir"], step["module"])
        sys.path.insert(0, step["dir"])
        try:
            mod.main(step["inputs"], step["outputs"], step["env"], argparse.Namespace(**step["args"]))
        finally:
            sys.path.remove(step["dir"])
    elif kind == "script":
        saved = dict(os.environ)
        os.environ.update(step["env"])
        sys.argv = [step["script"]] + step["argv"]
        for name in SHARED:
            sys.modules.pop(name, None)
        sys.path.insert(0, os.path.dirname(step["script"]))
        try:
            runpy.run_path(step["script"], run_name="__main__")
        finally:
            sys.path.pop(0)
            os.environ.clear()
            os.environ.update(saved)
    elif kind == "pack":
        os.makedirs(os.path.dirname(step["archive"]), exist_ok=True)
        with tarfile.open(step["archive"], "w:gz") as tar:
            for name in sorted(os.listdir(step["dir"])):
                tar.add(os.path.join(step["dir"], name), arcname=name)
    elif kind == "serve":
        work = tempfile.mkdtemp()
        with tarfile.open(step["archive"]) as tar:
            tar.extractall(work)
        inference = fresh_import(os.path.join(work, "code"), "inference")
        model = inference.model_fn(work)
        responses = {}
        with tarfile.open(step["payload"]) as tar:
            meta = json.load(tar.extractfile("metadata.json"))
            for sample in meta["samples"]:
                body = tar.extractfile(sample["file"]).read()
                data = inference.input_fn(body, sample["content_type"])
                responses[sample["file"]] = inference.output_fn(inference.predict_fn(data, model), sample["content_type"])
        for req in step.get("requests", []):
            data = inference.input_fn(req["body"].encode(), req["content_type"])
            responses[req["file"]] = inference.output_fn(inference.predict_fn(data, model), req["content_type"])
        with open(step["responses"], "w") as f:
            json.dump(responses, f)
    else:
        raise ValueError("unknown step kind %r" % kind)


for step in json.load(open(sys.argv[1])):
    os.makedirs(os.path.dirname(step["log"]), exist_ok=True)
    with open(step["log"], "w") as log:
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                run(step)
        except BaseException:
            traceback.print_exc(file=log)
            failed = True
        else:
            failed = False
    if failed:
        with open(step["log"]) as log:
            sys.stderr.write("step %s failed:\n%s" % (step["name"], log.read()))
        sys.exit(1)
