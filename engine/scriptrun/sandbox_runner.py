# Sandbox launcher for validate.run_scripts (written by cursus; not user code).
#
# argv[1] is a JSON plan written by the Go runner:
#   {"script", "sandbox", "root", "input_paths", "output_paths",
#    "environ_vars", "job_args", "argv", "max_file_bytes"}
# It maps every /opt/ml/... path the script touches to <root>/opt/ml/...,
# refuses writes outside the sandbox and process spawning through Python's
# audit hooks, then calls main(input_paths, output_paths, environ_vars,
# job_args) when the script defines it, or runs it as __main__ otherwise.
#
# The security boundary is the OS sandbox this runs in (engine/sandbox:
# Landlock, seccomp, rlimits, a PID namespace and a cgroup per run where the
# kernel allows). The audit hooks only give a script a clear message for
# naive escapes, and are all there is when the
# operator allowed unisolated runs: C extensions writing through their own
# file handles are not seen, and a determined script can defeat them.
import argparse
import builtins
import importlib.util
import io
import json
import os
import runpy
import sys

with open(sys.argv[1], encoding="utf-8") as _f:
    PLAN = json.load(_f)

SANDBOX = os.path.realpath(PLAN["sandbox"])
ROOT = os.path.realpath(PLAN["root"])
CONTAINER = "/opt/ml"
ALLOWED_WRITE = ("/dev/null", "/dev/stdout", "/dev/stderr")

try:
    import resource

    _cap = int(PLAN.get("max_file_bytes") or 0)
    if _cap > 0:
        resource.setrlimit(resource.RLIMIT_FSIZE, (_cap, _cap))
except (ImportError, ValueError, OSError):
    pass


def _map(p):
    """Rewrite a container path to its sandbox location."""
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


def _wrap1(fn):
    def wrapper(path, *args, **kwargs):
        return fn(_map(path), *args, **kwargs)

    wrapper.__name__ = getattr(fn, "__name__", "wrapped")
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    return wrapper


def _wrap2(fn):
    def wrapper(src, dst, *args, **kwargs):
        return fn(_map(src), _map(dst), *args, **kwargs)

    wrapper.__name__ = getattr(fn, "__name__", "wrapped")
    return wrapper


builtins.open = _wrap1(builtins.open)
io.open = builtins.open
for _name in ("open", "stat", "lstat", "mkdir", "listdir", "scandir", "remove", "unlink", "rmdir",
              "chmod", "utime", "access", "truncate", "readlink", "chdir"):
    if hasattr(os, _name):
        setattr(os, _name, _wrap1(getattr(os, _name)))
for _name in ("rename", "replace", "link", "symlink"):
    if hasattr(os, _name):
        setattr(os, _name, _wrap2(getattr(os, _name)))


def _inside(path):
    if isinstance(path, int) or path is None:
        return True
    try:
        s = os.fsdecode(os.fspath(path))
    except TypeError:
        return True
    if s in ALLOWED_WRITE:
        return True
    real = os.path.realpath(s)
    return real == SANDBOX or real.startswith(SANDBOX + os.sep)


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_PATH_EVENTS = {"os.mkdir", "os.remove", "os.rmdir", "os.chmod", "os.chown", "os.truncate", "os.utime",
                "shutil.rmtree", "shutil.copyfile", "shutil.copytree", "shutil.move", "os.link", "os.symlink"}
_SPAWN_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
                 "os.forkpty", "os.startfile", "pty.spawn"}


def _deny(what):
    raise PermissionError("cursus sandbox: " + what)


def _audit(event, args):
    if event == "open":
        path, mode, flags = (list(args) + [None, None, None])[:3]
        writing = False
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            writing = True
        if isinstance(flags, int) and flags & _WRITE_FLAGS:
            writing = True
        if writing and not _inside(path):
            _deny("write outside the sandbox refused: %r" % (path,))
    elif event in _PATH_EVENTS:
        for a in args[:2]:
            if isinstance(a, (str, bytes, os.PathLike)) and not _inside(a):
                _deny("%s outside the sandbox refused: %r" % (event, a))
    elif event in ("os.rename", "shutil.move"):
        for a in args[:2]:
            if not _inside(a):
                _deny("rename outside the sandbox refused: %r" % (a,))
    elif event in _SPAWN_EVENTS:
        _deny("starting processes is not allowed (%s)" % event)


sys.addaudithook(_audit)

script = PLAN["script"]
sys.argv = [script] + list(PLAN.get("argv") or [])
sys.path.insert(0, os.path.dirname(script))
os.environ.update(PLAN.get("environ_vars") or {})

spec = importlib.util.spec_from_file_location("cursus_step_script", script)
module = importlib.util.module_from_spec(spec)
sys.modules["cursus_step_script"] = module
spec.loader.exec_module(module)
main = getattr(module, "main", None)
if callable(main):
    job_args = argparse.Namespace(**(PLAN.get("job_args") or {}))
    result = main(dict(PLAN["input_paths"]), dict(PLAN["output_paths"]), dict(PLAN.get("environ_vars") or {}), job_args)
    try:
        print("CURSUS_MAIN_RESULT " + json.dumps(result, default=str)[:2000])
    except (TypeError, ValueError):
        pass
else:
    runpy.run_path(script, run_name="__main__")
