"""What `import` checks of a record recorded elsewhere before the store takes it: a record is data from another
machine, perhaps forged (a "does-not-reproduce" of another case, dated 2099, with a made-up case hash).

- its numbers are JSON numbers (no NaN or Infinity: `seconds: NaN`, `1e400` are refused, never stored);
- its text is cut and cleaned as a run cuts it (message 2,000 characters, output tails as runs keep them);
- a record of a case says which content of the case ran (`case_hash`): it must be a content the case has had, its
  present folder or one of its versions in the repository's git history;
- its recording time is not in the future;
- its verdict follows from its own observation under the oracle of the case's version it ran (the judge `import`
  passes in: run/rejudge.py), so that a forged verdict with the case's real content hash is refused;
- its case is a case id (`[a-z0-9][a-z0-9-]*`: never `.` or `..`, which named the repository's root and its
  parent), its variant and dtype names of the same kind (`_` allowed);
- its `contained` keeps only the facts a keeper writes (untrusted_text.contained_facts), never markup;
- it was recorded by a run of a runner whose record key this machine holds: the runner that recorded it into a store
  folder other than the repository's `results/` (the one that is copied to another machine) signed it there
  (`<torch>.signatures`: an HMAC-SHA256 of the record under the key), so that a record written by anyone else (a
  case, a hand, another machine) is refused, even with the real case hash and a verdict that follows from it.
  The key: REPROKIT_RECORD_KEY (hex; CI's secret), else ~/.config/reprokit/record-key (made on first use, mode 0600).
Each refused record is named in one line; the others are imported.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import re
import secrets
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from reprokit.model import case_identity
from reprokit.model.records import Record, RunHeader
from reprokit.model.untrusted_text import contained_facts, recordable, recordable_value, without_install_paths
from reprokit.store import rehash
from reprokit.store.store import Store

MESSAGE_CAP = 2000  # characters of an exception's message a run keeps (probe.py)
STDOUT_CAP = 2000  # characters of stdout a record keeps (run/execute.py)
STDERR_CAP = 6100  # the stderr tail a run keeps: 6,000 bytes and its "earlier bytes truncated" line
CLOCK_SKEW = timedelta(minutes=10)
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")  # a case id (model/schema.py's CaseId)
PART = re.compile(r"[a-z0-9][a-z0-9_-]{0,79}")  # a variant (article_fix), a dtype (float8_e4m3fn)


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


def _history_hashes(root: Path, case: str) -> dict[str, str]:
    """run identity -> a commit holding that version of cases/<case>/, for every version in the repository's git
    history (none outside a checkout)."""
    try:
        return {case_identity.identity_of(files): commit for commit, files in reversed(rehash.versions(root, case))}
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
        return {}


class CaseContents:
    """The contents each case of the repository at `root` has had, computed once per case, the git history only
    where the present content is not the one asked about."""

    def __init__(self, root: Path):
        self.root = root
        self._present: dict[str, str | None] = {}
        self._history: dict[str, dict[str, str]] = {}

    def had(self, case: str, content: str) -> bool:
        if case not in self._present:
            folder = self.root / "cases" / case
            real = folder.is_dir() and not folder.is_symlink() and NAME.fullmatch(case) is not None
            self._present[case] = case_identity.content_hash(folder) if real else None
        if content == self._present[case]:
            return True
        if case not in self._history:
            self._history[case] = _history_hashes(self.root, case) if NAME.fullmatch(case) else {}
        return content in self._history[case]

    def case_yaml(self, case: str, content: str) -> str | None:
        """The case.yaml of the case's version with that content (had() first): the oracle its record was judged by."""
        if content == self._present.get(case):
            try:
                return (self.root / "cases" / case / "case.yaml").read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
        commit = self._history.get(case, {}).get(content)
        text = _git(self.root, "show", f"{commit}:cases/{case}/case.yaml") if commit else b""
        return text.decode("utf-8", "replace") or None


def record_key() -> bytes:
    """This runner's record key: REPROKIT_RECORD_KEY (hex), else the key file (made on first use, the user's own)."""
    given = os.environ.get("REPROKIT_RECORD_KEY", "").strip()
    if given:
        try:
            return bytes.fromhex(given)
        except ValueError:
            return given.encode()
    path = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "reprokit" / "record-key"
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:  # another runner made it meanwhile
            return bytes.fromhex(path.read_text().strip())
        key = secrets.token_bytes(32)
        os.write(fd, key.hex().encode())
        os.close(fd)
        return key


def signature(rec: Record, key: bytes) -> str:
    """The record's HMAC-SHA256 under the key, over its JSON as the store keeps it (outputs included)."""
    return hmac.new(key, rec.model_dump_json().encode(), hashlib.sha256).hexdigest()


def sign(folder: Path, records: list[Record]) -> bool:
    """Add the records' signatures (as the store keeps them) to the `<torch>.signatures` companions of their files in
    the store `folder`; False where no key or no file could be written (the records then stay unsigned)."""
    try:
        key = record_key()
        by_file: dict[Path, list[str]] = {}
        for rec in records:
            path = Store(folder).file(rec.target, rec.suite, rec.torch).with_suffix(".signatures")
            by_file.setdefault(path, []).append(signature(rec, key))
        for path, lines in by_file.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="ascii") as fh:
                fh.write("".join(f"{line}\n" for line in lines))
    except OSError:
        return False
    return True


def signatures(folder: Path) -> set[str]:
    """Every signature the store folder holds (64 hex digits a line; anything else is no signature)."""
    found: set[str] = set()
    for path in folder.glob("*/*/*.signatures"):
        if path.is_file() and not path.is_symlink():
            found.update(
                line
                for line in path.read_text(encoding="ascii", errors="replace").split()
                if re.fullmatch(r"[0-9a-f]{64}", line)
            )
    return found


def refusal(rec: Record, contents: CaseContents, now: datetime, judge=None, signed=None) -> str | None:
    """Why `rec` may not be imported, or None. `signed(rec)`: whether a runner whose key this machine holds recorded
    it (None: not asked, e.g. a legacy results.json)."""
    for field in ("case", "variant", "dtype"):
        value = getattr(rec, field, None)
        rule = NAME if field == "case" else PART
        if value is not None and not (isinstance(value, str) and rule.fullmatch(value)):
            return f"{field} {str(value)[:40]!r} is not a name of the corpus ({rule.pattern.split('{')[0]}*)"
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
        if judge is not None:  # the verdict must follow from the record's own observation, under that version's oracle
            why = judge(rec, contents.case_yaml(rec.case, rec.case_hash))
            if why:
                return why
    if signed is not None and not signed(rec):  # last: a record wrong in itself is named for what is wrong
        return "not signed by a runner whose record key this machine holds: no run of this case recorded it here"
    return None


def as_a_run_cuts(rec: Record) -> Record:
    """The record with its case-controlled text cut and cleaned as a run cuts it (validated again, so that the words
    cut back to plain text are the record's enums once more)."""
    cut = {
        "message": recordable(rec.message)[:MESSAGE_CAP] if rec.message is not None else None,
        "why": recordable(rec.why)[:MESSAGE_CAP],
        "exception": recordable(rec.exception)[:300] or rec.exception,
        # the tails were read as the other machine wrote them (jsonl_files.fill_outputs): cut as a record cuts them
        "stdout_tail": without_install_paths(recordable(rec.stdout_tail))[-STDOUT_CAP:],
        "stderr_tail": without_install_paths(recordable(rec.stderr_tail))[-STDERR_CAP:],
        "contained": contained_facts(rec.contained),
        # the rest of its text, which no run lets a case write but a forged record may: plain, one line, cut (its
        # status is one of RunStatus's words already: the record was refused on reading otherwise)
        **{
            name: recordable(value).replace("\n", " ")[:300]
            for name in ("stage", "signal", "confirmed_alone")
            if isinstance(value := getattr(rec, name), str)
        },
        **{
            name: recordable_value(value)
            for name in ("dynamo", "ladder", "on_other_machines")
            if (value := getattr(rec, name)) is not None
        },
    }
    return Record.model_validate({**rec.model_dump(), **cut})


def header_as_a_run_cuts(header: RunHeader) -> RunHeader:
    """A run header of another machine with its text plain (its environment and sittings reach the reports)."""
    return RunHeader.model_validate(recordable_value(header.model_dump()))


def checked(
    records: list[Record], root: Path, judge=None, source: Path | None = None
) -> tuple[list[Record], list[str]]:
    """The records fit to import (cut as runs cut them) and one line for each refused record. `judge(record,
    case.yaml text or None)`: why its verdict does not follow from its observation, or None (run/rejudge.py; the
    store does not judge). `source`: the store folder they came from, whose signatures must vouch for each."""
    contents, now = CaseContents(root), datetime.now(timezone.utc)
    signed = None
    if source is not None:
        held, key = signatures(source), record_key()
        signed = lambda rec: signature(rec, key) in held  # noqa: E731 - one check, closed over the folder's set
    kept, refused = [], []
    for rec in records:
        why = refusal(rec, contents, now, judge, signed)
        if why:
            refused.append(f"refused {rec.target}/{rec.torch} {rec.key}: {why}")
        else:
            kept.append(as_a_run_cuts(rec))
    return kept, refused
