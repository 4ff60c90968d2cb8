# Serving worker for engine/serving (written by cursus; not user code).
#
# Emulates, in one long-lived process, how a SageMaker serving image loads
# a model and answers /invocations:
#   - sagemaker-xgboost: script mode when SAGEMAKER_PROGRAM is set (the
#     module from the submit directory, unpacked at /opt/ml/code), the
#     algorithm's scoring service otherwise (every non-dot file at the top
#     of the model directory loaded as a booster, pickle first);
#   - pytorch-inference: the inference toolkit, SAGEMAKER_PROGRAM (default
#     inference.py) imported from /opt/ml/model/code only, its default
#     handler (TorchScript model.pt) when that module is absent;
#   - sagemaker-scikit-learn: script mode only.
# Handlers the user module omits fall back to that image's defaults.
#
# argv[1] is a JSON plan from the Go side. Requests arrive on the plan's
# FIFO, answers leave on the original stdout; both are frames of a 4-byte
# big-endian length and the bytes: a JSON header, then a body. Everything
# the model code prints goes to stderr (the log).
import builtins
import importlib
import importlib.util
import inspect
import io
import json
import os
import struct
import sys
import traceback

with open(sys.argv[1], encoding="utf-8") as _f:
    PLAN = json.load(_f)

_OUT = os.fdopen(os.dup(1), "wb", buffering=0)
os.dup2(2, 1)

ROOT = os.path.realpath(PLAN["root"])
CONTAINER = "/opt/ml"
MODEL_DIR = os.path.join(ROOT, "opt/ml/model")
CODE_DIR = os.path.join(ROOT, "opt/ml/code")
UTF8_TYPES = ("application/json", "text/csv")
KNOWN_PACKAGES = {"lightgbm", "catboost", "tensorflow", "keras", "transformers", "sagemaker_inference",
                  "sagemaker_containers", "xgboost", "torch", "sklearn", "pandas", "numpy", "scipy", "joblib"}


class Fail(Exception):
    """An error with a kind the Go side reports (engine/serving Kind)."""

    def __init__(self, kind, message, field=""):
        super().__init__(message)
        self.kind, self.message, self.field = kind, message, field


def _map(p):
    """Rewrite a container path (/opt/ml/...) to its place in the sandbox."""
    if isinstance(p, int):
        return p
    try:
        s = os.fspath(p)
    except TypeError:
        return p
    if isinstance(s, bytes):
        if s == CONTAINER.encode() or s.startswith(CONTAINER.encode() + b"/"):
            return ROOT.encode() + s
        return s
    if s == CONTAINER or s.startswith(CONTAINER + "/"):
        return ROOT + s
    return p


def _wrap(fn):
    def wrapper(*args, **kwargs):
        if args:
            args = (_map(args[0]),) + args[1:]
        return fn(*args, **kwargs)

    wrapper.__name__ = getattr(fn, "__name__", "wrapped")
    return wrapper


builtins.open = _wrap(builtins.open)
io.open = builtins.open
for _name in ("open", "stat", "lstat", "listdir", "scandir", "mkdir", "remove", "unlink", "access"):
    if hasattr(os, _name):
        setattr(os, _name, _wrap(getattr(os, _name)))


def write_frame(b):
    _OUT.write(struct.pack(">I", len(b)))
    _OUT.write(b)


def send(header, body=b""):
    write_frame(json.dumps(header).encode("utf-8"))
    write_frame(body)


def read_exact(f, n):
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_frame(f):
    head = read_exact(f, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    return read_exact(f, n) if n else b""


def parse_header(value):
    """A media type and its parameters, as cgi.parse_header gives them."""
    parts = [p.strip() for p in (value or "").split(";")]
    params = {}
    for p in parts[1:]:
        if "=" in p:
            k, v = p.split("=", 1)
            params[k.strip().lower()] = v.strip().strip('"')
    return parts[0], params


def call(fn, *args):
    """Call a handler with or without the trailing context argument, as the
    inference toolkit does."""
    try:
        n = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return fn(*args)
    if n == len(args) + 1:
        return fn(*args, None)
    if n != len(args):
        raise TypeError("{} takes {} arguments but {} were given.".format(getattr(fn, "__name__", fn), n, len(args)))
    return fn(*args)


def require(module):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise Fail("runtime_unavailable", "%s is not installed on this server (%s)" % (module, e))


def unsupported(what):
    raise Fail("content_type", "Content type %s is not supported by this framework. Please implement input_fn "
                               "to deserialize the request data or an output_fn to serialize the response." % what)


def requirements(code_dir):
    """Check that every package code/requirements.txt names is importable:
    the real container pip-installs them at start; here nothing is
    installed, so a missing one makes the model unavailable, named."""
    path = os.path.join(code_dir, "requirements.txt")
    if not os.path.isfile(path):
        return []
    import importlib.metadata as md
    import re

    names = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("-"):
                continue
            m = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line)
            if not m:
                continue
            name = m.group(0)
            names.append(name.lower().replace("-", "_"))
            try:
                md.distribution(name)
                continue
            except md.PackageNotFoundError:
                pass
            if importlib.util.find_spec(name.lower().replace("-", "_")) is None:
                raise Fail("runtime_unavailable", "requirements.txt needs %r, which is not installed on this server "
                                                  "(the serving container would pip-install it at start)" % line)
    return names


def listing(d):
    try:
        return ", ".join(sorted(os.listdir(d))) or "nothing"
    except OSError:
        return "nothing"


def has_module(d, name):
    """Whether d holds module name (a .py file or a package directory)."""
    return os.path.isfile(os.path.join(d, name + ".py")) or os.path.isfile(os.path.join(d, name, "__init__.py"))


def import_user_module(name, where, required_names):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        top = (e.name or "").split(".")[0]
        if top == name:
            raise
        if top in required_names or top in KNOWN_PACKAGES:
            raise Fail("runtime_unavailable", "%s imports %s, which is not installed on this server" % (where, top))
        raise Fail("missing_code", "%s imports %s, which is neither in the code directory nor installed" % (where, top))


# ---- defaults of the inference toolkit (pytorch-inference) ----

def toolkit_decode(data, content_type):
    np = require("numpy")
    if content_type == "text/csv":
        return np.genfromtxt(io.StringIO(data), delimiter=",")
    if content_type == "application/json":
        return np.array(json.loads(data))
    if content_type == "application/x-npy":
        return np.load(io.BytesIO(data), allow_pickle=True)
    unsupported(content_type)


def toolkit_encode(value, content_type):
    np = require("numpy")
    if content_type == "application/json":
        return json.dumps(value, default=lambda x: x.tolist() if hasattr(x, "tolist") else json.JSONEncoder().default(x))
    if content_type == "text/csv":
        s = io.StringIO()
        np.savetxt(s, value, delimiter=",", fmt="%s")
        return s.getvalue()
    if content_type == "application/x-npy":
        b = io.BytesIO()
        np.save(b, value)
        return b.getvalue()
    unsupported(content_type)


class TorchDefaults:
    def model_fn(self, model_dir):
        torch = require("torch")
        path = os.path.join(model_dir, "model.pt")
        if not os.path.exists(path):
            files = [f for f in os.listdir(model_dir)
                     if os.path.isfile(os.path.join(model_dir, f)) and os.path.splitext(f)[1] in (".pt", ".pth")]
            if len(files) != 1:
                raise ValueError("Exactly one .pth or .pt file is required for PyTorch models: {}".format(files))
            path = os.path.join(model_dir, files[0])
        try:
            return torch.jit.load(path, map_location=torch.device("cpu"))
        except RuntimeError as e:
            raise RuntimeError("Failed to load {}. Please ensure model is saved using torchscript.".format(
                os.path.basename(path))) from e

    def input_fn(self, data, content_type):
        torch = require("torch")
        arr = toolkit_decode(data, content_type)
        return torch.FloatTensor(arr) if content_type in UTF8_TYPES else torch.from_numpy(arr)

    def predict_fn(self, data, model):
        torch = require("torch")
        with torch.no_grad():
            model.eval()
            return model(data)

    def output_fn(self, prediction, accept):
        torch = require("torch")
        if type(prediction) is torch.Tensor:
            prediction = prediction.detach().cpu().numpy().tolist()
        for ct in accept.replace(" ", "").split(","):
            if ct in ("application/json", "text/csv", "application/x-npy"):
                out = toolkit_encode(prediction, ct)
                return out.encode("utf-8") if ct == "text/csv" else out
        unsupported(accept)


# ---- defaults of sagemaker-containers (xgboost and sklearn script mode) ----

def containers_decode(data, content_type):
    np = require("numpy")
    if content_type == "application/json":
        return np.array(json.loads(data))
    if content_type == "text/csv":
        import csv
        rows = list(csv.reader(io.StringIO(data), delimiter=",", quotechar='"', doublequote=True, strict=True))
        return np.array(rows).squeeze()
    if content_type == "application/x-npy":
        return np.load(io.BytesIO(data), allow_pickle=True)
    unsupported(content_type)


def containers_encode(value, content_type):
    np = require("numpy")
    if content_type == "application/json":
        return json.dumps(value, default=lambda x: x.tolist() if hasattr(x, "tolist") else json.JSONEncoder().default(x))
    if content_type == "text/csv":
        import csv
        arr = np.array(value)
        if len(arr.shape) == 1:
            arr = np.reshape(arr, (arr.shape[0], 1))
        s = io.StringIO()
        csv.writer(s, lineterminator="\n", delimiter=",", quotechar='"', doublequote=True, strict=True).writerows(arr)
        return s.getvalue()
    if content_type == "application/x-npy":
        b = io.BytesIO()
        np.save(b, value)
        return b.getvalue()
    unsupported(content_type)


def no_model_fn(model_dir):
    raise NotImplementedError("Please provide a model_fn implementation. (The %s image has no default model_fn: "
                              "the module named by SAGEMAKER_PROGRAM must define one.)" % PLAN["framework"])


def xgb_csv_dmatrix(text, dtype=None):
    import csv
    np = require("numpy")
    xgb = require("xgboost")
    sniff = csv.Sniffer().sniff(text.split("\n")[0][:512]).delimiter
    delim = "," if sniff.isalnum() else sniff
    rows = [["nan" if x == "" else x for x in line.split(delim)] for line in text.split("\n")]
    return xgb.DMatrix(np.array(rows).astype(dtype if dtype is not None else float))


def xgb_libsvm_dmatrix(text):
    np = require("numpy")
    xgb = require("xgboost")
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    rows = []
    for line in text.strip().split("\n"):
        row = {}
        for tok in line.strip().split():
            if ":" in tok:
                i, v = tok.split(":", 1)
                row[int(i)] = float(v)
        rows.append(row)
    if not rows or not any(rows):
        return xgb.DMatrix(np.empty((0, 0)))
    lo = min(i for r in rows for i in r)
    off = 1 if lo >= 1 else 0
    width = max(i for r in rows for i in r) - off + 1
    data = np.zeros((len(rows), width))
    for n, r in enumerate(rows):
        for i, v in r.items():
            data[n, i - off] = v
    return xgb.DMatrix(data)


class XGBScriptDefaults:
    model_fn = staticmethod(no_model_fn)

    @staticmethod
    def input_fn(data, content_type):
        media, _ = parse_header(content_type)
        if media == "text/csv":
            return xgb_csv_dmatrix(data if isinstance(data, str) else data.decode("utf-8"))
        if media in ("text/libsvm", "text/x-libsvm"):
            return xgb_libsvm_dmatrix(data)
        if media == "application/x-recordio-protobuf":
            raise Fail("content_type", "application/x-recordio-protobuf is not emulated here")
        unsupported(media)

    @staticmethod
    def predict_fn(data, model):
        return model.predict(data, validate_features=False)

    @staticmethod
    def output_fn(prediction, accept):
        return containers_encode(prediction, accept), accept


class SKLearnDefaults:
    model_fn = staticmethod(no_model_fn)

    @staticmethod
    def input_fn(data, content_type):
        np = require("numpy")
        arr = containers_decode(data, content_type)
        return arr.astype(np.float32) if content_type in UTF8_TYPES else arr

    @staticmethod
    def predict_fn(data, model):
        return model.predict(data)

    @staticmethod
    def output_fn(prediction, accept):
        return containers_encode(prediction, accept), accept


class ScriptModel:
    """A user module served through model_fn/input_fn/predict_fn/output_fn
    (or transform_fn), the image's defaults filling the gaps."""

    def __init__(self, module, defaults, default_accept):
        self.default_accept = default_accept
        get = lambda n: getattr(module, n, None) if module is not None else None
        self.transform_fn = get("transform_fn")
        fns = [get(n) for n in ("input_fn", "predict_fn", "output_fn")]
        if self.transform_fn and any(fns):
            raise Fail("handler", "Cannot use transform_fn implementation in conjunction with input_fn, predict_fn, "
                                  "and/or output_fn implementation")
        self.model_fn = get("model_fn") or defaults.model_fn
        self.input_fn = fns[0] or defaults.input_fn
        self.predict_fn = fns[1] or defaults.predict_fn
        self.output_fn = fns[2] or defaults.output_fn
        self.model = None

    def load(self):
        try:
            self.model = call(self.model_fn, MODEL_DIR)
        except Fail:
            raise
        except Exception as e:
            raise Fail("model_load", "model_fn failed: %s: %s" % (type(e).__name__, short(e)))

    def invoke(self, body, content_type, accept):
        if not accept or accept == "*/*":
            accept = self.default_accept
        data = body.decode("utf-8") if content_type in UTF8_TYPES else body
        if self.transform_fn:
            result = call(self.transform_fn, self.model, data, content_type, accept)
        else:
            result = call(self.output_fn, call(self.predict_fn, call(self.input_fn, data, content_type), self.model), accept)
        ctype = accept
        if isinstance(result, tuple):
            result, ctype = result[0], result[1]
        if isinstance(result, str):
            result = result.encode("utf-8")
        if not isinstance(result, (bytes, bytearray)):
            raise Fail("handler", "output_fn returned %s; the model server sends only bytes or str" % type(result).__name__)
        return bytes(result), ctype


XGB_ACCEPTS = ("application/json", "application/jsonlines", "application/x-recordio-protobuf", "text/csv")


class XGBAlgorithm:
    """The sagemaker-xgboost scoring service (algorithm mode)."""

    def __init__(self):
        self.boosters, self.objective = [], None

    def load(self):
        import pickle
        xgb = require("xgboost")
        files = sorted(f for f in os.listdir(MODEL_DIR)
                       if os.path.isfile(os.path.join(MODEL_DIR, f)) and not f.startswith("."))
        if not files:
            raise Fail("model_load", "Unable to load model: no file at the top of /opt/ml/model (it holds: %s); the "
                                     "XGBoost algorithm container loads the booster from there" % listing(MODEL_DIR))
        if os.environ.get("SAGEMAKER_INFERENCE_ENSEMBLE", "true") != "true":
            files = files[:1]
        for f in files:
            path = os.path.join(MODEL_DIR, f)
            try:
                with open(path, "rb") as fh:
                    booster = pickle.load(fh)
                fmt = "pkl"
            except Exception as ep:
                try:
                    booster = xgb.Booster()
                    booster.load_model(path)
                    fmt = "xgb"
                except Exception as ex:
                    raise Fail("model_load", "Unable to load model: Model /opt/ml/model/%s cannot be loaded (the "
                                             "XGBoost algorithm container loads every non-dot file at the top of the "
                                             "model directory as a booster):\nPickle load error=%s\nXGB load model "
                                             "error=%s" % (f, ep, ex))
            booster.set_param("nthread", 1)
            self.boosters.append((booster, fmt))
        self.objective = json.loads(self.boosters[0][0].save_config())["learner"]["objective"]["name"]

    def invoke(self, body, content_type, accept):
        np = require("numpy")
        if "SAGEMAKER_INFERENCE_OUTPUT" in os.environ:
            raise Fail("content_type", "SAGEMAKER_INFERENCE_OUTPUT (selectable inference output) is not emulated here")
        if len(body) == 0:
            return b"", accept or "text/csv"
        media, params = parse_header((content_type or "").lower())
        if content_type is None or content_type == "":
            media = "text/libsvm"
        try:
            if media in ("csv", "text/csv"):
                if params.get("label_size", "1") != "1":
                    raise ValueError("Optional parameter label_size must be equal to 1")
                dtest, kind = xgb_csv_dmatrix(body.strip().decode("utf-8"), dtype=float), "csv"
            elif media in ("libsvm", "text/libsvm", "text/x-libsvm"):
                dtest, kind = xgb_libsvm_dmatrix(body.strip().decode("utf-8")), "libsvm"
            else:
                raise Fail("content_type", "Content-type %s is not supported." % content_type)
        except Fail:
            raise
        except Exception as e:
            raise Fail("payload", "Loading %s data failed with Exception, please ensure data is in %s format: %s: %s"
                       % (media, media, type(e).__name__, short(e)))
        preds = []
        for booster, fmt in self.boosters:
            if fmt == "pkl":
                x, y = booster.num_features(), dtest.num_col()
                if kind == "libsvm" and y > x + 1:
                    raise Fail("payload", "Feature size of libsvm inference data %d is larger than feature size of "
                                          "trained model %d." % (y, x))
                if kind == "csv" and not (x == y or x == y + 1):
                    raise Fail("payload", "Feature size of csv inference data %d is not consistent with feature size "
                                          "of trained model %d." % (y, x))
            try:
                best = int(getattr(booster, "best_ntree_limit", 0) or 0)
                if "ntree_limit" in inspect.signature(booster.predict).parameters:
                    preds.append(booster.predict(dtest, ntree_limit=best, validate_features=False))
                elif best > 0:
                    preds.append(booster.predict(dtest, iteration_range=(0, best), validate_features=False))
                else:
                    preds.append(booster.predict(dtest, validate_features=False))
            except Exception as e:
                raise Fail("payload", "Unable to evaluate payload provided: %s" % short(e))
        if len(preds) == 1:
            pred = preds[0]
        elif self.objective in ("multi:softmax", "binary:hinge"):
            stacked = np.stack(preds).astype(int)
            pred = np.apply_along_axis(lambda c: np.bincount(c).argmax(), 0, stacked)
        else:
            pred = np.mean(preds, axis=0)
        amedia, _ = parse_header(accept or "")
        if not amedia or amedia == "*/*":
            amedia = os.environ.get("SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT", "text/csv")
        elif amedia.lower() not in XGB_ACCEPTS:
            raise Fail("content_type", "Accept type %s is not supported. Please use supported accept types: %s."
                       % (accept, list(XGB_ACCEPTS)))
        amedia = amedia.lower()
        values = pred.tolist()
        if os.environ.get("SAGEMAKER_BATCH"):
            return ("\n".join(map(str, values)) + "\n").encode("utf-8"), amedia
        if amedia == "application/json":
            return json.dumps({"predictions": [{"score": v} for v in values]}).encode("utf-8"), amedia
        if amedia == "text/csv":
            return containers_encode(values, "text/csv").encode("utf-8"), amedia
        unsupported(amedia)


def load():
    fw = PLAN["framework"]
    env = os.environ
    default_accept = env.get("SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT", "application/json")
    if fw == "xgboost" and not env.get("SAGEMAKER_PROGRAM"):
        m = XGBAlgorithm()
        m.load()
        return m, {"mode": "algorithm"}
    if fw in ("xgboost", "sklearn"):
        program = env["SAGEMAKER_PROGRAM"]
        name = program[:-3] if program.endswith(".py") else program
        sys.path.insert(0, CODE_DIR)
        needed = requirements(CODE_DIR)
        if not has_module(CODE_DIR, name):
            raise Fail("missing_code", "SAGEMAKER_PROGRAM is %r but the code unpacked from SAGEMAKER_SUBMIT_DIRECTORY "
                                       "(%s) has no module %s (it holds: %s)"
                       % (program, env.get("SAGEMAKER_SUBMIT_DIRECTORY", "unset: /opt/ml/code"), name,
                          listing(CODE_DIR)),
                       field="Environment.SAGEMAKER_PROGRAM" if env.get("SAGEMAKER_SUBMIT_DIRECTORY")
                       else "Environment.SAGEMAKER_SUBMIT_DIRECTORY")
        if fw == "xgboost":
            require("xgboost")
        module = import_user_module(name, program, needed)
        m = ScriptModel(module, XGBScriptDefaults if fw == "xgboost" else SKLearnDefaults, default_accept)
        m.load()
        return m, {"mode": "script", "module": name}
    if fw == "pytorch":
        require("torch")
        program = env.get("SAGEMAKER_PROGRAM", "inference.py")
        name = program[:-3] if program.endswith(".py") else program
        code = os.path.join(MODEL_DIR, "code")
        sys.path.insert(0, code)
        needed = requirements(code)
        found = has_module(code, name)
        m = ScriptModel(import_user_module(name, "code/" + program, needed) if found else None, TorchDefaults(),
                        default_accept)
        try:
            m.load()
        except Fail as e:
            if found:
                raise
            note = ""
            if env.get("SAGEMAKER_SUBMIT_DIRECTORY", "").startswith("s3://"):
                note = "; SAGEMAKER_SUBMIT_DIRECTORY (%s) is not read by this container" % env["SAGEMAKER_SUBMIT_DIRECTORY"]
            raise Fail("missing_code", "the model archive has no code/%s (the PyTorch serving container imports "
                                       "handlers only from code/ inside model.tar.gz%s), so it fell back to its default "
                                       "handler, which expects a TorchScript model.pt and failed: %s"
                       % (program, note, e.message), field="ModelDataUrl")
        return m, {"mode": "script" if found else "default", "module": name if found else ""}
    raise Fail("image", "unknown framework %s" % fw)


def short(e):
    """An exception's text without the native stack trace xgboost appends."""
    return str(e).split("\nStack trace:")[0].strip()[:2000]


def failure(e):
    if isinstance(e, Fail):
        return {"ok": False, "kind": e.kind, "field": e.field, "message": e.message}
    return {"ok": False, "kind": "handler", "message": "%s: %s" % (type(e).__name__, short(e)),
            "traceback": traceback.format_exc()[-4000:]}


def main():
    try:
        model, info = load()
    except BaseException as e:  # noqa: BLE001 - everything is reported
        h = failure(e)
        if h["kind"] == "handler":
            h["kind"] = "model_load"
        traceback.print_exc()
        # The reply carries the traceback itself: the log read from
        # stderr may not have caught up with it when the reply arrives.
        h.setdefault("traceback", traceback.format_exc()[-4000:])
        send(h)
        return
    send(dict(info, ok=True))
    with open(PLAN["requests"], "rb", buffering=0) as req:
        while True:
            head = read_frame(req)
            if head is None:
                return
            h = json.loads(head)
            body = read_frame(req)
            if body is None or h.get("op") != "invoke":
                return
            try:
                out, ctype = model.invoke(body, h.get("content_type"), h.get("accept"))
                send({"ok": True, "content_type": ctype}, out)
            except BaseException as e:  # noqa: BLE001
                traceback.print_exc()
                send(failure(e))


main()
