"""Runs one case script unchanged and records what happened, from inside the child process.

Usage (the runner does this): python probe.py SCRIPT [ARGS...]
Writes $REPROKIT_REPORT_DIR/probe-<rank>.json with the exception (if any), the stage it came from, dynamo's
counters and the run's key (read from the descriptor $REPROKIT_KEY_FD). The script runs in a process forked from the
probe's, which holds neither the key nor the report's descriptor and tells the probe what happened over a pipe; the
report is opened before the fork, in a folder outside the run's, which Landlock keeps the script from writing.
`python probe.py --torchrun N SCRIPT` is the launcher of a torchrun case: N ranks, each a probe of SCRIPT. Standard library only and no import of reprokit, so it runs in any interpreter that has torch.
$REPROKIT_BACKEND=eager|aot_eager replaces the backend of every torch.compile call (the ablation ladder).
$REPROKIT_WRITABLE (folders, os.pathsep-separated): with Landlock in the kernel, the script and its children can write
nowhere else.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
from types import ModuleType
from typing import Any, NoReturn


def _dynamo_counters() -> dict[str, Any] | None:
    if "torch._dynamo" not in sys.modules:
        return None
    try:
        from torch._dynamo.utils import counters, get_compilation_metrics
    except Exception:  # a torch without these helpers: record nothing rather than guess
        return None
    metrics = get_compilation_metrics()
    return {
        "graph_breaks": int(sum(counters["graph_break"].values())),
        "graph_break_reasons": sorted(counters["graph_break"])[:5],
        "unique_graphs": int(counters["stats"]["unique_graphs"]),
        "recompiles": sum(1 for m in metrics if getattr(m, "recompile_reason", None)),
    }


def _force_backend(backend: str) -> None:
    import torch

    original = torch.compile

    def compile_with(model: Any = None, *args: Any, **kwargs: Any) -> Any:
        for key in ("backend", "mode", "options"):
            kwargs.pop(key, None)
        return original(model, *args, backend=backend, **kwargs)

    torch.compile = compile_with


def _sibling(name: str) -> ModuleType:
    """A module of this folder, loaded by its path (the probe runs with PYTHONSAFEPATH: nothing is importable)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        f"reprokit_child_{name}", os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    )
    assert spec is not None and spec.loader is not None  # a .py file's location always has a spec and a loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


landlock = _sibling("landlock")
stages = _sibling("stages")


def _isolate_path() -> None:
    """Nothing importable from the case's folder or this package's folder until confinement holds.

    The runner starts the probe with PYTHONSAFEPATH=1 (python -P), so neither the script's folder nor probe.py's
    is on sys.path; on an interpreter without it (3.10) probe.py's own folder is removed here. The variable is then
    dropped, so the script and its child processes see the environment `python repro.py` would.
    """
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != here]
    os.environ.pop("PYTHONSAFEPATH", None)


def _in_exec_environment(name: str) -> bool:
    """Whether this process was started with `name` in its environment: /proc/self/environ shows it for the life of
    the process, whatever os.environ says since."""
    try:
        with open("/proc/self/environ", "rb") as fh:
            return any(entry.startswith(name.encode() + b"=") for entry in fh.read().split(b"\0"))
    except OSError:
        return False


def _key_off_the_environment() -> None:
    """A torchrun rank gets the run's key in its environment from the launcher; such a process starts itself again
    with the key on a pipe instead (REPROKIT_KEY_FD), so that its /proc/self/environ never holds it. Done before the
    script's process is forked: that process must never have held the key."""
    key = os.environ.get("REPROKIT_REPORT_KEY")
    if key is not None and "REPROKIT_KEY_FD" not in os.environ and _in_exec_environment("REPROKIT_REPORT_KEY"):
        os.environ.pop("REPROKIT_REPORT_KEY")
        read_end, write_end = os.pipe()
        os.write(write_end, key.encode())
        os.close(write_end)
        os.set_inheritable(read_end, True)
        os.environ["REPROKIT_KEY_FD"] = str(read_end)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


def _take_key() -> str:
    """The run's observation key, which no process of the case may read.

    It comes on a descriptor (REPROKIT_KEY_FD: the keeper's pipe), read and closed here, in the probe's own process,
    after the script's process was forked off. A warm run has it in os.environ only (its zygote was started without
    it)."""
    fd, key = os.environ.pop("REPROKIT_KEY_FD", None), os.environ.pop("REPROKIT_REPORT_KEY", None)
    if fd is not None and fd.isdigit():
        try:
            return os.read(int(fd), 256).decode("ascii", "replace")
        finally:
            os.close(int(fd))
    return key or ""


def _drop_key() -> None:
    """In the script's process: the key's descriptor closed unread, its variables gone."""
    fd = os.environ.pop("REPROKIT_KEY_FD", None)
    os.environ.pop("REPROKIT_REPORT_KEY", None)
    os.environ.pop("REPROKIT_REPORT_DIR", None)
    if fd is not None and fd.isdigit():
        try:
            os.close(int(fd))
        except OSError:
            pass


def _launch_torchrun(key: str, nproc: int, script: str) -> None:
    """The launcher of a torchrun case (`probe.py --torchrun N SCRIPT`): torch.distributed.run in this process, each
    rank a probe of the script; the ranks get the key from this process's os.environ, never from its own
    environment block."""
    os.environ["REPROKIT_REPORT_KEY"] = key
    sys.argv = ["torchrun", "--standalone", f"--nproc-per-node={nproc}", os.path.abspath(__file__), script]
    runpy.run_module("torch.distributed.run", run_name="__main__", alter_sys=True)


def _open_report(rank: str) -> int | None:
    """The report file, opened before the script runs: the runner made it, empty (a root runner's file, which the
    case's user may write but neither read, chmod nor replace); never a link. None where there is none.

    The variable leaves the environment, so that the script and its children do not see it."""
    folder = os.environ.pop("REPROKIT_REPORT_DIR", None)
    if not folder or not rank.isdigit():
        return None
    try:
        fd = os.open(os.path.join(folder, f"probe-{rank}.json"), os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    if os.fstat(fd).st_size:  # written already (another probe of this rank): not this probe's report
        os.close(fd)
        return None
    return fd


def _prctl(option: int, value: int) -> int:  # PR_SET_PDEATHSIG 1, PR_SET_DUMPABLE 4
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE = 1, 4
_FORWARDED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
OBSERVATION_CAP = 256 * 1024  # what the script's process reports is a few KB (the message is cut at 2000 characters)


def _run_script(script: str, channel: int) -> NoReturn:
    """The script's process: runs the script as `python script.py` would, then writes what happened (no key) to
    `channel`, the only descriptor it holds towards the probe, and exits as the script did."""
    record: dict[str, Any] = {"exception": None, "message": None, "stage": None, "exit_code": 0}
    landlock.cap_files(os.environ.pop("REPROKIT_FILE_CAP", ""))
    if os.environ.get("REPROKIT_WRITABLE"):  # the runner's folders for this run; writes elsewhere fail (EACCES)
        record["confined"] = landlock.confine_writes(os.environ["REPROKIT_WRITABLE"].split(os.pathsep))
    sys.path.insert(0, os.path.dirname(script))  # as `python repro.py` has it, now that writes are confined
    if os.environ.get("REPROKIT_BACKEND"):
        _force_backend(os.environ["REPROKIT_BACKEND"])
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        record["exit_code"] = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - whatever the script raised is the observation
        traceback.print_exc()
        record.update(
            exception=stages.qualname(exc),
            stage=stages.stage_of(exc),
            exit_code=1,
            message=str(exc).strip()[:2000],
            chain=[stages.qualname(e) for e in stages.chain(exc)][:6],
        )
    record["dynamo"] = _dynamo_counters()
    data = json.dumps(record).encode()
    try:
        while data:
            data = data[os.write(channel, data) :]
        os.close(channel)
    except OSError:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    # A normal exit, as under `python script.py`: a crash or hang in interpreter teardown (atexit handlers, a process
    # group's destructor) is the script's behaviour too, and shows as a signal or a timeout.
    sys.exit(record["exit_code"])


def _read_observation(channel: int, pid: int) -> tuple[dict[str, Any] | None, int]:
    """What the script's process wrote on `channel`, read until that process ends (not until EOF: a child it forked
    may hold the pipe open for ever), then what is left in the pipe; and its wait status."""
    import fcntl
    import select

    fcntl.fcntl(channel, fcntl.F_SETFL, fcntl.fcntl(channel, fcntl.F_GETFL) | os.O_NONBLOCK)
    chunks, left, eof = list[bytes](), OBSERVATION_CAP, False
    while True:
        if not eof and left > 0:
            select.select([channel], [], [], 0.05)
            eof, left = _drain(channel, chunks, left)
        else:
            status = os.waitpid(pid, 0)[1]
            break
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended == pid:
            break
    _drain(channel, chunks, left)  # written before it exited: in the pipe now
    os.close(channel)
    try:
        record = json.loads(b"".join(chunks))
    except ValueError:
        return None, status
    return (record if isinstance(record, dict) and "key" not in record else None), status


def _drain(channel: int, chunks: list[bytes], left: int) -> tuple[bool, int]:
    """Read what the pipe holds now (up to `left` bytes); (end of file seen, bytes still allowed)."""
    while left > 0:
        try:
            chunk = os.read(channel, min(left, 1 << 16))
        except BlockingIOError:
            return False, left
        if not chunk:
            return True, left
        chunks.append(chunk)
        left -= len(chunk)
    return False, left


def main() -> NoReturn:
    """The probe keeps the key and the report's descriptor in its own process and forks the script's process, which
    holds neither: the probe is not dumpable (no ptrace, no /proc/<pid>/mem or fd of it for the case's user), so the
    script can neither read the key nor write the report. The probe writes the report from what the script's
    process told it, with the exit status it saw itself, and ends as that process ended (its code or its signal)."""
    _key_off_the_environment()
    if sys.argv[1] == "--torchrun":  # PYTHONSAFEPATH stays: the ranks start with it, as this process did
        _launch_torchrun(_take_key(), int(sys.argv[2]), os.path.abspath(sys.argv[3]))
        sys.exit(0)
    _isolate_path()
    script = os.path.abspath(sys.argv[1])
    sys.argv = [script, *sys.argv[2:]]
    import signal

    _prctl(_PR_SET_DUMPABLE, 0)  # before the fork: no moment in which the script's process could attach to this one
    report = _open_report(os.environ.get("RANK", "0"))  # before the fork: the script cannot make the file first
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        if report is not None:
            os.close(report)
        _prctl(_PR_SET_DUMPABLE, 1)  # the script's own process is as `python repro.py` has it
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        _drop_key()
        _run_script(script, write_end)
    os.close(write_end)
    for name in _FORWARDED:  # torchrun's agent and the keeper signal this process: the script's process gets it
        signal.signal(getattr(signal, name), lambda signum, _frame: os.kill(pid, signum))
    key = _take_key()  # after the fork: the script's process never held it, not even in memory
    record, status = _read_observation(read_end, pid)
    if record is not None and report is not None:
        if os.WIFEXITED(status):
            record["exit_code"] = os.WEXITSTATUS(status)  # seen here, not told
        data = json.dumps({**record, "key": key}).encode()
        while data:
            data = data[os.write(report, data) :]
    if report is not None:
        os.close(report)
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        if signum not in (signal.SIGKILL, signal.SIGSTOP):  # those two cannot be caught, nor set
            signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main()
