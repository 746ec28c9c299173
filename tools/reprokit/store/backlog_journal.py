"""The backlog's journal, `OUT/backlog.jsonl`: one JSON line per judgement, appended and synced to disk as each issue
is judged, so that a shard killed midway loses at most the issue it was judging (a torn last line is ignored, and cut
off before the next append). The newest judgement of each issue stands; merging shards keeps it, and writes the
merged journal whole (a temporary file renamed over it).

A journal comes back from a CI artifact: every line is checked for its fields' types, and one that is not a
judgement is skipped, never trusted."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from reprokit.model.schema import InputError
from reprokit.model.untrusted_text import recordable

JOURNAL = "backlog.jsonl"
NOT_READ, NOT_JUDGED = "not read", "not judged"  # the kinds besides a triage's standings (StandingKind)
MAX_LINE = 200_000  # characters of one journal line: a judgement is a few kilobytes


@dataclass(frozen=True)
class Ran:
    release: str
    line: str  # what the script did there, or why it did not run


@dataclass(frozen=True)
class Judgement:
    """One issue's standing as a backlog keeps it."""

    ident: str  # "#N", or the file's name where no number could be read
    number: int | None
    state: str  # OPEN | CLOSED ("" where not read)
    title: str
    kind: str  # a StandingKind's value, NOT_READ or NOT_JUDGED
    words: str  # the standing's words after its kind (why, for NOT_READ and NOT_JUDGED)
    key: str  # backlog_select.judged_key: what was judged
    judged_at: str  # UTC, ISO 8601: the newest judgement of an issue stands
    releases: list[Ran] = field(default_factory=list)
    signature: str = ""  # the failure observed on the release judged on, and where
    draft: str | None = None  # the comment draft's file name, in OUT/drafts/
    closed_at: str = ""
    retry: bool = False  # judged again on the next run, whatever the key (an internal error, a machine problem)

    def line(self) -> str:
        """As triage prints a standing: a kind that is a reason ("not posted", not read, not judged) takes a colon."""
        return (
            f"{self.kind}: {self.words}"
            if self.kind in (NOT_READ, NOT_JUDGED, "not posted")
            else f"{self.kind} {self.words}".rstrip()
        )


_TYPES = {
    "ident": str,
    "state": str,
    "title": str,
    "kind": str,
    "words": str,
    "key": str,
    "judged_at": str,
    "signature": str,
    "closed_at": str,
    "retry": bool,
}


def to_line(j: Judgement) -> str:
    data = asdict(j)
    for name in ("title", "words", "signature"):
        data[name] = recordable(data[name])
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def from_line(text: str) -> Judgement | None:
    """A judgement, or None where the line is not one (torn, edited, another file's)."""
    if len(text) > MAX_LINE:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {f.name for f in fields(Judgement)}:
        return None
    if any(not isinstance(data[k], t) for k, t in _TYPES.items()):
        return None
    number, draft, runs = data["number"], data["draft"], data["releases"]
    if not (number is None or (isinstance(number, int) and not isinstance(number, bool) and number > 0)):
        return None
    if not (draft is None or (isinstance(draft, str) and draft == f"issue-{number}-comment.md")):
        return None  # a draft is only ever the issue's own file in drafts/: no path of a line's choosing is copied
    if not isinstance(runs, list) or not all(
        isinstance(r, dict) and set(r) == {"release", "line"} and all(isinstance(v, str) for v in r.values())
        for r in runs
    ):
        return None
    return Judgement(**{**data, "releases": [Ran(**r) for r in runs]})


def read(path: Path) -> list[Judgement]:
    """Every judgement of a journal, in the order written (a missing journal has none)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as err:
        raise InputError(f"{path}: cannot be read ({err.strerror})") from None
    return [j for line in text.splitlines() if line.strip() for j in [from_line(line)] if j is not None]


NEEDS_A_GPU = "the script needs a CUDA GPU"  # how triage refuses a CUDA script on a CPU target (triage_device)


def wants_a_gpu(j: Judgement) -> bool:
    """A CPU shard's refusal of a script that needs a CUDA GPU: what a GPU shard's judgement replaces."""
    return j.kind == NOT_JUDGED and j.words.startswith(NEEDS_A_GPU)


def newest(judgements: list[Judgement]) -> dict[str, Judgement]:
    """Each issue's newest judgement (a later line wins a tie: it was written after), except that a CPU shard's
    "needs a CUDA GPU" never replaces a GPU shard's judgement of the issue, whichever ran last."""
    kept: dict[str, Judgement] = {}
    rank = lambda j: (not wants_a_gpu(j), j.judged_at)  # noqa: E731 - a refusal ranks below any judgement
    for j in judgements:
        if j.ident not in kept or rank(j) >= rank(kept[j.ident]):
            kept[j.ident] = j
    return kept


class Journal:
    """A journal open for appending: each line written whole, flushed and synced before the next issue."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._cut_torn_tail()
        self._file = open(path, "a", encoding="utf-8")

    def _cut_torn_tail(self) -> None:
        """A line cut by a kill (no newline at the end) is dropped, so that the next line starts on its own."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        if data and not data.endswith(b"\n"):
            with open(self.path, "r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)

    def append(self, j: Judgement) -> None:
        self._file.write(to_line(j) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *_) -> None:
        self.close()


def write_whole(path: Path, judgements: list[Judgement]) -> None:
    """The journal replaced at once: a reader sees the old one or the new one, never half."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(to_line(j) + "\n" for j in judgements), encoding="utf-8")
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    tmp.replace(path)


BACKLOG = (
    "backlog"  # results/backlog/: a merged backlog kept in the store (`backlog --merge ... --out results/backlog`)
)
PREVIOUS = "backlog-previous.jsonl"  # the list a merge replaced: the next merge's feed compares with it
DRAFTS = "drafts"  # OUT/drafts/issue-N-comment.md


@dataclass(frozen=True)
class KeptBacklog:
    """A merged backlog as the store keeps it: the judgements, the list they replaced (None: the first one), and the
    drafts' text by file name (issue-N-comment.md, the only names a judgement may give)."""

    judgements: list[Judgement]
    previous: list[Judgement] | None
    drafts: dict[str, str]


def kept_backlog(folder: Path) -> KeptBacklog | None:
    """The backlog kept in `folder` (results/backlog), or None where there is none."""
    if not (folder / JOURNAL).is_file():
        return None
    judgements = list(newest(read(folder / JOURNAL)).values())
    previous = read(folder / PREVIOUS) if (folder / PREVIOUS).is_file() else None
    drafts = {}
    for j in judgements:
        path = folder / DRAFTS / (j.draft or "")
        if j.draft is not None and path.is_file() and not path.is_symlink():
            drafts[j.draft] = path.read_text(encoding="utf-8", errors="replace")
    return KeptBacklog(judgements, previous, drafts)
