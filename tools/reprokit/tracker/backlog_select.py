"""What a backlog run takes: the issue files of a folder (each read as `reprokit triage --issue-json` reads one; a file
that cannot be read is kept, with why, so that it becomes one line of the list and never stops the batch), the part of
them a shard takes (`--shard K/N`, by issue number: the N parts are disjoint and cover the folder, whatever order the
files come in), and the key of what a judgement judged (the issue's text a triage reads and the releases it runs),
which says whether an earlier judgement still stands."""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from reprokit.contrib.script_code import facts
from reprokit.model.schema import InputError
from reprokit.tracker.issue import issue_json, issue_script
from reprokit.tracker.issue.issue_json import MAINTAINERS, Issue
from reprokit.tracker.issue.issue_script import reproducer_anywhere

SHARD = re.compile(r"([1-9]\d{0,3})/([1-9]\d{0,3})")
MAX_FILES = 100_000  # issue files of one folder: pytorch/pytorch has ~60,000 open and closed together


@dataclass(frozen=True)
class Shard:
    index: int  # 1..count
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        m = SHARD.fullmatch(text.strip())
        if not m or int(m.group(1)) > int(m.group(2)):
            raise InputError(f"--shard {text!r}: K/N with 1 <= K <= N <= 9999 (e.g. 2/8)")
        return cls(int(m.group(1)), int(m.group(2)))

    def takes(self, entry: Entry) -> bool:
        return entry.order % self.count == self.index - 1


ALL = Shard(1, 1)


@dataclass(frozen=True)
class Entry:
    """One file of the folder: the issue read from it, or why it could not be read."""

    path: Path
    issue: Issue | None
    why: str = ""  # "not read: ..." where issue is None

    @property
    def number(self) -> int | None:
        if self.issue is not None:
            return self.issue.number
        return int(self.path.stem) if self.path.stem.isdigit() and len(self.path.stem) < 10 else None

    @property
    def ident(self) -> str:
        """What the journal and the merge know this entry by: the issue's number, else the file's name."""
        return f"#{self.number}" if self.number is not None else self.path.name

    @property
    def order(self) -> int:
        """The number a shard is chosen by: the issue's, else a checksum of the file's name (stable across runs)."""
        return self.number if self.number is not None else zlib.crc32(self.path.name.encode("utf-8", "replace"))


def needs_a_gpu(entry: Entry) -> bool:
    """The script triage would run for the issue (the description's, else a maintainer's or the author's comment's)
    needs a CUDA GPU, as triage reads it (judging/triage_device.py): what a GPU runner's shard takes."""
    found = reproducer_anywhere(entry.issue) if entry.issue is not None else None
    return found is not None and facts(found.text).cuda_only


def read_entry(path: Path) -> Entry:
    try:
        issue = issue_json.read(path)
    except InputError as err:
        return Entry(path, None, f"not read: {one_line(str(err).replace(str(path) + ': ', ''))}")
    except OSError as err:  # unreadable (permissions, a folder named *.json, a broken link)
        return Entry(path, None, f"not read: {err.strerror or type(err).__name__}")
    if path.stem.isdigit() and int(path.stem) != issue.number:
        return Entry(path, None, f"not read: the file holds issue #{issue.number}, not #{int(path.stem)}")
    return Entry(path, issue)


def read_folder(folder: Path) -> list[Entry]:
    """Every *.json file of the folder, by issue number (unreadable ones after, by name)."""
    if not folder.is_dir():
        raise InputError(
            f"--issues-json {folder}: not a folder (one <number>.json per issue, as `gh issue view N "
            "--json ...` prints it)"
        )
    paths = sorted(folder.glob("*.json"))
    if len(paths) > MAX_FILES:
        raise InputError(f"--issues-json {folder}: {len(paths):,} files, over the {MAX_FILES:,} one backlog reads")
    entries = [read_entry(p) for p in paths]
    seen: dict[int, Entry] = {}
    for entry in entries:
        if entry.issue is not None and entry.issue.number in seen:
            raise InputError(
                f"--issues-json {folder}: {entry.path.name} and {seen[entry.issue.number].path.name} "
                f"both hold issue #{entry.issue.number}: keep one"
            )
        if entry.issue is not None:
            seen[entry.issue.number] = entry
    return sorted(entries, key=lambda e: (e.number is None, e.number or 0, e.path.name))


def one_line(text: str, limit: int = 300) -> str:
    return " ".join(text.split())[:limit]


def _has_script(text: str) -> bool:
    return any(
        info in issue_script.PYTHON_INFO and issue_script.IMPORTS_TORCH.search(block)
        for info, block in issue_script.fences(text)
    )


def judged_key(issue: Issue, target: str, releases: tuple[str, ...]) -> str:
    """A digest of what a triage of the issue reads and runs: its body, its state (a closed issue is judged against
    its close), the comments that bring a script or speak for the project (a maintainer's verdict ends a triage),
    the target and the releases run. The title and other comments change nothing a triage says."""
    comments = [c.body for c in issue.comments if c.association in MAINTAINERS or _has_script(c.body)]
    payload = json.dumps(
        {
            "body": issue.body,
            "state": issue.state,
            "reason": issue.state_reason,
            "closed": issue.closed_at,
            "comments": comments,
            "target": target,
            "releases": list(releases),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def file_key(path: Path) -> str:
    """The key of a file that could not be read: its bytes (an edited file is read again)."""
    try:
        if path.stat().st_size > issue_json.MAX_JSON_BYTES:  # refused unread: its size and time say it changed
            return f"file:{path.stat().st_size}:{path.stat().st_mtime_ns}"
        return "file:" + hashlib.sha256(path.read_bytes()).hexdigest()[:20]
    except OSError:
        return "file:unreadable"
