"""Warm-interpreter runs: a process that has imported torch forks one child per run (before any CUDA init).

Usage (the runner does this): python zygote.py   -- then JSON lines on stdin: {"id", "script", "cwd", "env",
"stdout", "stderr"}; it answers {"id", "pid"} when the child starts and {"id", "status"} (waitpid style: negative
signal number or exit code) when it ends. Standard library + torch only, like probe.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import runpy
import sys
import tempfile
import threading
from typing import TYPE_CHECKING, Any, NoReturn

import torch

# The point of the zygote: children start with torch and dynamo imported (about 2 + 2 s on 2 cores). Not inductor's
# codecache: it fixes its header folder from $TMPDIR at import time. The zygote runs in the environment every child
# gets, less the per-run folders, so configuration read from the environment at import time is the children's too.
import torch._dynamo  # noqa: F401

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")
if TYPE_CHECKING:  # the same module, as mypy reads it
    from reprokit.child import contain
else:
    _spec = importlib.util.spec_from_file_location("contain", os.path.join(os.path.dirname(PROBE), "contain.py"))
    assert _spec is not None and _spec.loader is not None  # a .py file's location always has a spec and a loader
    contain = importlib.util.module_from_spec(_spec)  # by path: the zygote runs with PYTHONSAFEPATH, like the probe
    _spec.loader.exec_module(contain)
_write_lock = threading.Lock()
_ids: dict[int, object] = {}  # child pid -> the id of its request


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _send(message: dict[str, Any]) -> None:
    with _write_lock:
        _write(message)


def _child(request: dict[str, Any]) -> NoReturn:
    os.setsid()  # its own process group, killed as a whole at the timeout
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # the import above cached the zygote's $TMPDIR; the run has its own
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.dup2(target, fd)
        os.close(target)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    threads = request["env"].get("OMP_NUM_THREADS")
    if threads:
        torch.set_num_threads(int(threads))  # OpenMP read the zygote's setting at import time
    sys.argv = [PROBE, request["script"]]
    contain.launch(request["contain"], _run_probe)  # this process keeps the run's processes in (contain.py)


def _run_probe() -> NoReturn:
    try:
        runpy.run_path(PROBE, run_name="__main__")  # probe.main() ends with sys.exit(code)
    except SystemExit as exc:
        # A forked child of a threaded process cannot run interpreter teardown safely: warm runs skip it (cold
        # runs, the published ones, do not).
        os._exit(exc.code if isinstance(exc.code, int) else 1)
    finally:
        os._exit(1)


def _reaper() -> NoReturn:
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            threading.Event().wait(0.05)
            continue
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        with _write_lock:  # the fork that made pid registered it under this lock
            _write({"id": _ids.pop(pid, None), "status": code})


def main() -> None:
    import ctypes
    import signal

    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: gone with the runner (its keepers too)
    threading.Thread(target=_reaper, daemon=True).start()
    _send({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        with _write_lock:  # no fork while a reply is half written
            pid = os.fork()
            if pid == 0:
                _child(request)
            _ids[pid] = request["id"]
        _send({"id": request["id"], "pid": pid})


if __name__ == "__main__":
    main()
