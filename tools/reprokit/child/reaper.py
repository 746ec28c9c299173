"""How a run's keeper (contain.py) ends: every process left below it killed and reaped, and the case's way of ending
(its exit code, or death by its signal) passed on as its own. Standard library only; loaded by path, like contain.py."""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
from collections.abc import Callable
from typing import NoReturn


def descendants(root: int) -> list[int]:
    parent_of: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    parent_of[int(entry)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found: list[int] = []
    frontier = [root]
    while frontier:
        frontier = [pid for pid, ppid in parent_of.items() if ppid in frontier]
        found += frontier
    return found


def end_all_below() -> None:
    """Kill and reap every process left below this one (a subreaper: orphans of the run are its children)."""
    me = os.getpid()
    while True:
        for pid in descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.wait()
        except ChildProcessError:
            return


def relay(status: int) -> NoReturn:
    """Exit as the case did: the same code, or death by the same signal (without a core of this process)."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.WIFSIGNALED(status):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        number = os.WTERMSIG(status)
        if number not in (signal.SIGKILL, signal.SIGSTOP):  # these two have no handler to reset (EINVAL)
            try:
                signal.signal(number, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
            except (OSError, ValueError):
                pass
        os.kill(os.getpid(), number)
        os._exit(128 + number)  # a signal that does not end a process by default
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def wait_for(pid: int) -> int:
    """Wait for pid, reaping whatever else ends meanwhile (orphans re-parented here); its wait status."""
    while True:
        try:
            ended, status = os.wait()
        except ChildProcessError:
            return 9  # killed from outside
        if ended == pid:
            return status


def wait_watching(
    pid: int, marker: str, every: float = 0.2, tick: Callable[[], None] | None = None
) -> tuple[int | None, bool]:
    """wait_for(pid), but also ended when the process below this one that runs the script `marker` (the sandbox's
    first process) is stopped (SIGSTOP from the case, its own user): (wait status or None, stopped)."""
    import time

    watched: int | None = None
    while True:
        try:
            ended, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 9, False
        if ended == pid:
            return status, False
        if ended:
            continue
        if tick:
            tick()
        watched = watched or _find(marker)
        if watched and _state(watched) in ("T", "t"):
            return None, True
        time.sleep(every)


def _find(marker: str) -> int | None:
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            if len(argv) > 1 and argv[1].endswith(marker.encode()):  # `python STAGE ...`, not bwrap's own line
                return pid
        except OSError:
            continue
    return None


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return None


def read_init_report(read_end: int, held: list[str], status: int, pid_namespace: bool) -> tuple[int, bool]:
    """What the init (or the sandbox's first process) said held (added to `held`), and the case's wait status it
    relayed ("S", "F" before it: stopped, a disk budget full; "C" after it: copy-out left something out for the
    cache budget); `status` is the init's own where there is no namespace, or where
    nothing was said (a sandbox that never started: bwrap said why on stderr); and whether anything was said."""
    report = b""
    while chunk := os.read(read_end, 4096):
        report += chunk
    if not report:
        return status, False
    lines = report.split(b"\n", 1)
    try:
        held += json.loads(lines[0])
    except ValueError:
        pass
    if not pid_namespace:
        return status, True
    tail = lines[1] if len(lines) > 1 else b""
    if tail[:1] == b"S":  # the case's first process was stopped (SIGSTOP): the run was ended there
        held.append("stopped by SIGSTOP")
        tail = tail[1:]
    if tail[:1] == b"F":
        held.append("over disk budget")
        tail = tail[1:]
    if len(tail) < 4:
        return 9, True  # no status: the init was killed
    if tail[4:5] == b"C":  # said after the status: copy-out left something out for the budget
        held.append("over cache budget")
    return struct.unpack("i", tail[:4])[0], True
