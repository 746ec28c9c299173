"""The keeper's spool of copy-out (outbox.py is the sandbox's side, copy_out.py writes the host folders): the stream
of the budgeted host folders is spooled into the keeper's private folder as the pipe becomes readable, then, once the
sandbox has ended, handed to copy_out.receive() within copy-out's own time limit. Never raises: whatever the host
disk or a file name does, the keeper goes on to its end, and a copy-out that failed or was cut off is said in the
keeper's facts. Standard library only; loaded by path, like contain.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import time
from types import ModuleType
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from reprokit.child.keeper import KeeperConfig


def _sibling(name: str) -> ModuleType:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"reprokit_child_{name}", path)
    assert spec is not None and spec.loader is not None  # a .py file's location always has a spec and a loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:  # the same modules, as mypy reads them (loaded by path, the keeper has no package)
    from reprokit.child import copy_out, outbox
else:
    copy_out = _sibling("copy_out")
    outbox = copy_out.outbox


class Spool:
    """What the sandbox streams out of its budgeted folders (outbox.py), spooled into the keeper's private folder as
    the pipe becomes readable (the sandbox never waits on the keeper's clock), then written into the host folders
    once the sandbox has ended. Its first bytes mean the case has ended: the keeper writes the time into "case-ended"
    (the runner's clock for the case stops there; copy-out is timed apart, within config "copy_out_seconds"), and
    what was copied into "copy-out.json"."""

    def __init__(self, config: KeeperConfig, read_end: int | None, write_end: int | None) -> None:
        self.fd, self.files = read_end, config["cache_files"] or 1 << 62
        self.cap, self.limit = config["cache_budget"], config["copy_out_seconds"]
        self.spool_cap = self.cap + (outbox.LISTED + 2) * outbox.MAX_HEADER + min(self.files, 1 << 20) * 4096
        self.folders, self.size = config["budgeted_fds"], 0
        self.ended_at: float | None = None
        self.was_overdue = False
        self.file: BinaryIO | None = None
        self.private = os.path.dirname(config["held"])
        self.path = os.path.join(self.private, "outbox")
        if read_end is None or write_end is None:
            return
        os.close(write_end)
        os.set_blocking(read_end, False)
        try:
            import fcntl

            fcntl.fcntl(read_end, fcntl.F_SETPIPE_SZ, 1 << 20)  # fewer wake-ups; the default 64 KiB still works
        except (OSError, AttributeError):
            pass
        self.file = open(
            os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600),
            "w+b",
            buffering=0,
        )

    @property
    def deadline(self) -> float:
        """When copy-out must have ended (monotonic): the case's end plus copy-out's own limit."""
        return (self.ended_at or time.monotonic()) + self.limit

    def overdue(self) -> bool:
        """Whether copy-out is past its limit (then remembered: the stream was cut there, or the sandbox killed)."""
        self.was_overdue = self.was_overdue or (self.ended_at is not None and time.monotonic() > self.deadline)
        return self.was_overdue

    def drain(self, wait: float = 0.0) -> bool:
        """Spool what the pipe holds, waiting up to `wait` seconds for more; False once the pipe is closed."""
        deadline = time.monotonic() + wait
        while self.file is not None and self.fd is not None:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    return True
                select.select([self.fd], [], [], left)
                continue
            if not chunk:
                return False
            if self.ended_at is None:
                self.ended_at = time.monotonic()
                self._write_private("case-ended", repr(self.ended_at))
            if self.size < self.spool_cap:
                self._spool(chunk[: self.spool_cap - self.size])
            self.size += len(chunk)
        return False

    def _spool(self, data: bytes) -> None:
        assert self.file is not None  # drain() spools only into an open spool
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.file.fileno(), view) :]
        except OSError:  # the host disk is full (or a file limit): the spool stops there, the sandbox still drains
            self.spool_cap = self.size + len(data) - len(view)

    def deliver(self, ended_well: bool) -> list[str]:
        """Write the spooled files into the host folders and say what was copied; never raises: whatever the host
        disk or a file name does, the keeper goes on to its end. The keeper's facts it adds: "copy-out failed",
        "copy-out cut off" (at its time limit: the host folder then holds only files of this run), "over cache
        budget" (the keeper's own count)."""
        if self.file is None or self.fd is None:
            return []
        facts: list[str] = []
        try:
            while not self.overdue() and self.drain(1.0):
                pass
            if ended_well:
                received = copy_out.receive(self.path, self.folders, self.cap, self.files, self.deadline)
                done = received.as_json()
                done["seconds"] = round(time.monotonic() - (self.ended_at or time.monotonic()), 3)
                done["spooled_past_cap"] = self.size > self.spool_cap
                self._write_private("copy-out.json", json.dumps(done))
                facts += ["copy-out cut off"] if received.cut_off or (self.was_overdue and not received.ended) else []
                facts += ["over cache budget"] if received.over_budget else []
                facts += ["copy-out failed"] if received.left_over else []
        except Exception as err:  # noqa: BLE001 - the keeper must reach its end (kills, budgets, facts)
            self._write_private("copy-out.json", json.dumps({"failed": f"{type(err).__name__}: {err}"[:300]}))
            facts.append("copy-out failed")
        finally:
            self.file.close()
            os.close(self.fd)
        return facts

    def _write_private(self, name: str, text: str) -> None:
        try:
            fd = os.open(
                os.path.join(self.private, name),
                os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )
            os.write(fd, text.encode())
            os.close(fd)
        except OSError:
            pass
