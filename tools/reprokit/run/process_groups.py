"""Stopping runs: the runner's stop switch and killing a run's whole process group (descendants included)."""

from __future__ import annotations

import os
import signal


class Interrupted(Exception):
    """The run was killed because the runner was asked to stop (SIGINT/SIGTERM): it has no observation."""


class Stopper:
    """The runner's stop switch: once pulled, no run starts and every live run's process group is killed."""

    def __init__(self, token: str = ""):
        import threading

        self.token = token  # every process of this runner's runs carries REPROKIT_RUN_TOKEN=<token>
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._live: set[int] = set()
        self.killed: set[int] = set()

    @property
    def stopped(self) -> bool:
        return self._event.is_set()

    def started(self, pgid: int) -> None:
        with self._lock:
            self._live.add(pgid)
        if self.stopped:  # it raced with stop(): end it too
            self.stop()

    def ended(self, pgid: int) -> None:
        with self._lock:
            self._live.discard(pgid)

    def stop(self) -> None:
        self._event.set()
        with self._lock:
            live = list(self._live)
            self.killed.update(live)
        for pgid in live:
            kill_group(pgid)


def _descendants(root: int) -> list[int]:
    """Every live descendant of root (Linux /proc): torchrun starts its ranks in sessions of their own."""
    parent_of = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    parent_of[int(entry)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, ppid in parent_of.items() if ppid in frontier]
        found += children
        frontier = children
    return found


def kill_group(pgid: int) -> None:
    """Kill the run's process group and every descendant, including those that left the group (setsid)."""
    for pid in [pgid, *(_descendants(pgid) if os.path.isdir("/proc") else [])]:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
