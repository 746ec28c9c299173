"""What `import` checks of a record recorded elsewhere before the store takes it: a record is data from another
machine, perhaps forged (a "does-not-reproduce" of another case, dated 2099, with a made-up case hash).

- its numbers are JSON numbers (no NaN or Infinity: `seconds: NaN`, `1e400` are refused, never stored);
- its text is cut and cleaned as a run cuts it (message 2,000 characters, output tails as runs keep them);
- a record of a case says which content of the case ran (`case_hash`): it must be a content the case has had, its
  present folder or one of its versions in the repository's git history;
- its recording time is not in the future.
Each refused record is named in one line; the others are imported.
"""

from __future__ import annotations

import hashlib
import math
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePosixPath

from reprokit.model import corpus
from reprokit.model.records import Record
from reprokit.model.untrusted_text import recordable

MESSAGE_CAP = 2000  # characters of an exception's message a run keeps (probe.py)
STDOUT_CAP = 2000  # characters of stdout a record keeps (run/execute.py)
STDERR_CAP = 6100  # the stderr tail a run keeps: 6,000 bytes and its "earlier bytes truncated" line
CLOCK_SKEW = timedelta(minutes=10)


def _finite(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _git(root: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False, timeout=120)
    return done.stdout if done.returncode == 0 else b""


def _history_hashes(root: Path, case: str) -> set[str]:
    """content_hash of every version of cases/<case>/ in the repository's git history (none outside a checkout)."""
    folder = f"cases/{case}"
    found = set()
    for commit in _git(root, "log", "--format=%H", "--", folder + "/").decode().split():
        entries = []
        for line in _git(root, "ls-tree", "-r", "-z", commit, "--", folder + "/").split(b"\0"):
            meta, _, path = line.partition(b"\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == b"blob" and parts[0] != b"120000":  # links are never case files
                entries.append((PurePosixPath(path.decode("utf-8", "replace")).relative_to(folder), parts[2].decode()))
        digest = hashlib.sha256()
        for relative, blob in sorted(entries):
            digest.update(str(relative).encode() + b"\0" + _git(root, "cat-file", "blob", blob) + b"\0")
        found.add(digest.hexdigest()[:16])
    return found


class CaseContents:
    """The contents each case of the repository at `root` has had, computed once per case, the git history only
    where the present content is not the one asked about."""

    def __init__(self, root: Path):
        self.root = root
        self._present: dict[str, str | None] = {}
        self._history: dict[str, set[str]] = {}

    def had(self, case: str, content: str) -> bool:
        if case not in self._present:
            folder = self.root / "cases" / case
            real = folder.is_dir() and not folder.is_symlink() and "/" not in case and case not in ("", ".", "..")
            self._present[case] = corpus.content_hash(folder) if real else None
        if content == self._present[case]:
            return True
        if case not in self._history:
            self._history[case] = _history_hashes(self.root, case) if "/" not in case else set()
        return content in self._history[case]


def refusal(rec: Record, contents: CaseContents, now: datetime) -> str | None:
    """Why `rec` may not be imported, or None."""
    if not _finite(rec.model_dump()):
        return "a number that is not a JSON number (NaN or Infinity)"
    try:
        when = datetime.fromisoformat(rec.recorded_at.replace("Z", "+00:00"))
        when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    except ValueError:
        return f"recorded_at {rec.recorded_at[:40]!r} is not an ISO 8601 time"
    if when > now + CLOCK_SKEW:
        return f"recorded_at {rec.recorded_at[:40]} is in the future"
    if rec.suite == "cases":
        if rec.case_hash is None:
            return "no case_hash: which content of the case ran is unknown"
        if not contents.had(rec.case, rec.case_hash):
            return f"case_hash {rec.case_hash[:40]} is no content cases/{rec.case}/ has had"
    return None


def as_a_run_cuts(rec: Record) -> Record:
    """The record with its case-controlled text cut and cleaned as a run cuts it."""
    return rec.model_copy(update={
        "message": recordable(rec.message)[:MESSAGE_CAP] if rec.message is not None else None,
        "why": recordable(rec.why)[:MESSAGE_CAP], "exception": recordable(rec.exception)[:300] or rec.exception,
        "stdout_tail": recordable(rec.stdout_tail)[-STDOUT_CAP:], "stderr_tail": recordable(rec.stderr_tail)[-STDERR_CAP:],
    })


def checked(records: list[Record], root: Path) -> tuple[list[Record], list[str]]:
    """The records fit to import (cut as runs cut them) and one line for each refused record."""
    contents, now = CaseContents(root), datetime.now(timezone.utc)
    kept, refused = [], []
    for rec in records:
        why = refusal(rec, contents, now)
        if why:
            refused.append(f"refused {rec.target}/{rec.torch} {rec.key}: {why}")
        else:
            kept.append(as_a_run_cuts(rec))
    return kept, refused
