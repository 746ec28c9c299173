"""A run's budgets, for its keeper (contain.py): one memory cgroup for all its processes, a pids cgroup (how many
processes and threads it may have at once), and (as root, in its mount namespace) its folder as a size-limited tmpfs.
Standard library only; loaded by path, like contain.py."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the case's Python may be older than the runner's
    from reprokit.child.keeper import KeeperConfig

    Cgroup = tuple[str, str | None]  # (its folder, the file that counts how often its limit was reached)


def memory_cgroup(budget: int) -> Cgroup | None:
    """A memory cgroup of `budget` bytes below this process's own (v2, else v1), or None where none can be made."""
    if not budget:
        return None
    try:
        with open("/proc/self/cgroup") as fh:
            lines = [line.rstrip("\n").split(":", 2) for line in fh]
    except OSError:
        return None
    candidates = []
    for _, controllers, path in lines:
        if controllers == "" and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            candidates.append(("/sys/fs/cgroup" + path, "memory.max", "memory.events"))
        elif "memory" in controllers.split(","):
            candidates.append(("/sys/fs/cgroup/memory" + path, "memory.limit_in_bytes", "memory.oom_control"))
    for base, limit, events in candidates:
        folder = os.path.join(base, f"reprokit-{os.getpid()}")
        try:
            os.mkdir(folder)
        except OSError:
            continue
        try:
            with open(os.path.join(folder, limit), "w") as fh:
                fh.write(str(budget))
            return folder, events
        except OSError:
            os.rmdir(folder)
    return None


def pids_cgroup(limit: int, memory: Cgroup | None = None) -> Cgroup | None:
    """A pids cgroup of at most `limit` tasks below this process's own (v1 `pids`; in v2 the memory cgroup's own
    folder when its pids.max exists), or None where none can be made."""
    if not limit:
        return None
    if memory and os.path.exists(os.path.join(memory[0], "pids.max")):
        try:
            with open(os.path.join(memory[0], "pids.max"), "w") as fh:
                fh.write(str(limit))
            return memory[0], "pids.events"
        except OSError:
            return None
    try:
        with open("/proc/self/cgroup") as fh:
            paths = [line.rstrip("\n").split(":", 2)[2] for line in fh if "pids" in line.split(":")[1].split(",")]
    except (OSError, IndexError):
        return None
    for path in paths:
        folder = os.path.join("/sys/fs/cgroup/pids" + path, f"reprokit-{os.getpid()}")
        try:
            os.mkdir(folder)
        except OSError:
            continue
        try:
            with open(os.path.join(folder, "pids.max"), "w") as fh:
                fh.write(str(limit))
            return folder, "pids.events"
        except OSError:
            os.rmdir(folder)
    return None


def run_cgroups(config: KeeperConfig) -> tuple[tuple[Cgroup | None, Cgroup | None], list[str]]:
    """The run's memory and pids cgroups (either None where it cannot be made) and what they hold, as recorded."""
    memory = memory_cgroup(config["memory_budget"])
    pids = pids_cgroup(config["pids_budget"], memory)
    held = [f"memory budget {config['memory_budget'] >> 20} MiB"] if memory else []
    return (memory, pids), held + ([f"pids budget {config['pids_budget']}"] if pids else [])


def join_all(groups: tuple[Cgroup | None, Cgroup | None]) -> None:
    memory, pids = groups
    join(memory)
    join(pids if pids and (not memory or pids[0] != memory[0]) else None)


def close_all(groups: tuple[Cgroup | None, Cgroup | None], held: list[str]) -> None:
    """Whether the run reached a budget (added to `held`); the cgroups removed."""
    memory, pids = groups
    held += ["over memory budget"] if memory and oom_kills(memory) else []
    held += ["over pids budget"] if pids and oom_kills(pids) else []
    for group in (memory, pids if pids and (not memory or pids[0] != memory[0]) else None):
        if group:
            remove_cgroup(group)


def join(cgroup: Cgroup | None) -> None:
    if cgroup:
        with open(os.path.join(cgroup[0], "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))


def oom_kills(cgroup: Cgroup) -> int:
    """How many times the cgroup's limit was reached: processes its memory limit killed (memory.events /
    memory.oom_control: oom_kill N), forks its pids limit refused (pids.events: max N)."""
    word = "max " if cgroup[1] == "pids.events" else "oom_kill "
    if cgroup[1] is None:
        return 0
    try:
        with open(os.path.join(cgroup[0], cgroup[1])) as fh:
            return sum(int(line.split()[1]) for line in fh if line.startswith(word))
    except (OSError, ValueError, IndexError):
        return 0


def remove_cgroup(cgroup: Cgroup) -> None:
    for _ in range(50):  # the killed processes leave it within milliseconds
        try:
            os.rmdir(cgroup[0])
            return
        except OSError:
            time.sleep(0.02)


def remove_left(keeper: int) -> list[str]:
    """For the runner, after a keeper `keeper` ended (a keeper killed at the timeout never removes its own): its
    cgroups, every process left in them killed first. Returns the folders removed."""
    try:
        with open("/proc/self/cgroup") as fh:
            lines = [line.rstrip("\n").split(":", 2) for line in fh]
    except OSError:
        return []
    bases = set()
    for _, controllers, path in lines:
        if controllers == "":
            bases.add("/sys/fs/cgroup" + path)
        for name in ("memory", "pids"):
            if name in controllers.split(","):
                bases.add(f"/sys/fs/cgroup/{name}" + path)
    removed = []
    for base in sorted(bases):
        folder = os.path.join(base, f"reprokit-{keeper}")
        if not os.path.isdir(folder):
            continue
        _kill_all_in(folder)
        remove_cgroup((folder, None))
        if not os.path.exists(folder):
            removed.append(folder)
    return removed


def _kill_all_in(folder: str) -> None:
    import signal

    try:
        with open(os.path.join(folder, "cgroup.kill"), "w") as fh:  # v2, Linux >= 5.14
            fh.write("1")
        return
    except OSError:
        pass
    try:
        with open(os.path.join(folder, "cgroup.procs")) as fh:
            pids = [int(line) for line in fh if line.strip().isdigit()]
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def full(*folders: str) -> bool:
    """Whether a budgeted tmpfs is (all but) full: a write there failed for want of room."""
    for folder in folders:
        try:
            info = os.statvfs(folder)
        except OSError:
            continue
        if info.f_bavail * info.f_frsize < (1 << 20):
            return True
    return False
