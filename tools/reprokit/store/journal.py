"""A run's journal: its own append-only file of finished records, and what the next run recovers from one whose
owner was killed (its records; the processes it left, found by the run's token)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.records import Record, RunHeader, dump, parse_header, parse_record


@dataclass
class Recovered:
    path: Path
    header: RunHeader | None
    records: list[Record]
    ended_pids: list[int]


class Journal:
    """A run's own append-only file, locked by its owner for as long as the run lives; fsync'd per record."""

    def __init__(self, path: Path, header: RunHeader, token: str):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        fcntl.flock(self._fh, fcntl.LOCK_EX)
        self._write({"header": json.loads(dump(header)), "token": token})

    def _write(self, data: dict) -> None:
        self._fh.write(json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def append(self, record: Record) -> None:
        self._write({"record": json.loads(dump(record))})

    def close(self, remove: bool) -> None:
        if remove:
            self.path.unlink(missing_ok=True)
        self._fh.close()


def read_journal(path: Path) -> tuple[RunHeader | None, str | None, list[Record]]:
    """A journal's header, token and records; a torn last line (the kill landed mid-write) is ignored."""
    header, token, records = None, None, []
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):  # "\n" alone ends a line
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        where = f"{path}:{n}"
        if "header" in data:
            header, token = parse_header(json.dumps(data["header"]), where), data.get("token")
        elif "record" in data:
            records.append(parse_record(json.dumps(data["record"]), where))
    return header, token, records


def processes_with_token(token: str) -> list[int]:
    """Live processes started by a run: every process of a run inherits REPROKIT_RUN_TOKEN=<token> (Linux /proc)."""
    needle = f"REPROKIT_RUN_TOKEN={token}".encode()
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    if needle in fh.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                continue
    return found


def end_processes(token: str) -> list[int]:
    pids = processes_with_token(token)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return pids
