"""issue-states.yaml: the state of every pytorch/pytorch issue the corpus links, as last read from GitHub (by the
issue-states workflow, or imported with `reprokit tracker-states --import FILE`), with the date it was read.

It overrides what a case.yaml says (`issue_state`, `issue_checked`, the page as the contributor read it), so the
upstream-issues page and the tracker drafts follow the tracker without editing the cases (an edit would change
their content hash and mark their records as made with an earlier version)."""

from __future__ import annotations

import dataclasses
import datetime
import re
from enum import Enum
from pathlib import Path
from typing import Literal

import yaml
from pydantic import ValidationError, model_validator

from reprokit.model.corpus import CaseDir
from reprokit.model.schema import InputError, OneLine, Strict, describe_error, read_yaml

FILE_NAME = "issue-states.yaml"
ISSUE_NUMBER = re.compile(r"^https://github\.com/pytorch/pytorch/issues/(\d+)$")
HEADER = (
    "# The state of each pytorch/pytorch issue linked from cases/ (source: upstream), as read from GitHub on\n"
    "# `checked`. Written by .github/workflows/issue-states.yml (`reprokit tracker-states --import`); it\n"
    "# overrides a case.yaml's issue_state / issue_checked. reports/upstream-issues.md is rendered from it.\n"
    "# link: same | related (does the case fail the way the issue reports? read from its thread; related: no\n"
    "# comment from the case); triage / triage_torch: what `reprokit triage N --record` said on that torch;\n"
    "# triage_kind / triage_releases: that standing as data (its kind, the releases it states).\n"
)


class StandingKind(str, Enum):
    """What a triage of an issue's own script says of it (tracker/issue_lifecycle decides it): the one vocabulary of
    standings. The value is also how the sentence begins; issue-states.yaml keeps the kind beside the sentence, so
    nothing reads the sentence back (but `standing_of_sentence`, for entries written before kinds were kept)."""

    STILL = "still reproduces"
    NO_LONGER = "no longer reproduces"
    DIFFERENT = "fails differently"
    DOES_NOT = "does not reproduce"
    NOT_POSTED = "not posted"  # no standing worth a comment: the sentence says why ("not posted: <reason>")

    def __str__(self) -> str:
        return self.value

    # str.__format__ takes format_spec positional-only, Enum declares it by name: the same call at runtime
    __format__ = str.__format__  # type: ignore[assignment]


_RELEASE = re.compile(r"\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc|\.dev)\d+)?(?:\+\w+)?")


def standing_of_sentence(line: str) -> tuple[StandingKind, list[str]]:
    """The kind and releases of a triage sentence written before they were kept as data: the one place that reads a
    sentence back (IssueState does, once, when an entry without `triage_kind` is read). The kind is the word the
    sentence begins with (NOT_POSTED where none); the releases are those its standing names before its first ':'
    (a span's two ends), the newest run's for "fails differently", none for "not posted"."""
    kind = next((k for k in StandingKind if line.startswith(k.value)), StandingKind.NOT_POSTED)
    said = line.split(" [signature on torch ")[0]
    if kind is StandingKind.NOT_POSTED:
        return kind, []
    if kind is StandingKind.DIFFERENT:
        newest = re.findall(r"on torch (\S+?):", said)
        return kind, newest[-1:]
    return kind, _RELEASE.findall(said.split(":")[0].split(";")[0])


class IssueState(Strict):
    state: Literal["open", "closed"]
    checked: datetime.date
    # Whether the linked case fails the way the issue reports (same API path and mode, same exception), read from the
    # issue's thread: "related" when the case tests something else near it (then no comment is drafted from it).
    # Kept here, not in case.yaml, so that the judgement does not change the case's content hash.
    link: Literal["same", "related"] | None = None
    link_why: OneLine | None = None
    # What `reprokit triage N --record` said after running the issue's own script: its one line, and on which torch.
    triage: OneLine | None = None
    triage_torch: OneLine | None = None
    # The standing as data beside its sentence (the sentence is its rendering; `reprokit tracker` decides by these):
    # its kind, and the releases it states (still failing, no longer failing, the newest failing another way).
    triage_kind: StandingKind | None = None
    triage_releases: list[OneLine] | None = None

    @model_validator(mode="before")
    @classmethod
    def _standing_of_an_older_entry(cls, data):
        """An entry written before the standing was kept as data: its kind and releases read from its sentence, here
        and only here (what the entry keeps wins)."""
        if (
            isinstance(data, dict)
            and isinstance(data.get("triage"), str)
            and None in (data.get("triage_kind"), data.get("triage_releases"))
        ):
            kind, releases = standing_of_sentence(data["triage"])
            data = {
                **data,
                "triage_kind": data.get("triage_kind") or kind,
                "triage_releases": releases if data.get("triage_releases") is None else data["triage_releases"],
            }
        return data


class IssueStates(Strict):
    issues: dict[int, IssueState] = {}


def issue_numbers(case) -> list[int]:
    """The pytorch/pytorch issues a case links, by number."""
    return [int(m.group(1)) for link in case.links if (m := ISSUE_NUMBER.match(link))]


def load(root: Path) -> IssueStates:
    """The root's issue-states.yaml, or no states when there is none."""
    path = root / FILE_NAME
    if not path.exists():
        return IssueStates()
    try:
        return IssueStates.model_validate(read_yaml(path, aliases=False) or {})
    except ValidationError as err:
        raise InputError(f"{path}: {describe_error(err)}") from None


def save(root: Path, states: IssueStates) -> Path:
    path = root / FILE_NAME
    kept = {"link", "link_why", "triage", "triage_torch", "triage_kind", "triage_releases"}
    data = {
        "issues": {
            n: {
                "state": s.state,
                "checked": s.checked.isoformat(),
                **{k: v for k, v in s.model_dump(mode="json", include=kept).items() if v is not None},
            }
            for n, s in sorted(states.issues.items())
        }
    }
    path.write_text(HEADER + yaml.safe_dump(data, sort_keys=False, width=120), encoding="utf-8")
    return path


def applied(cases: list[CaseDir], states: IssueStates) -> list[CaseDir]:
    """The cases with each linked issue's state and date taken from the states file (where it has the issue)."""
    out = []
    for cd in cases:
        known = [states.issues[n] for n in issue_numbers(cd.case) if n in states.issues]
        if known and cd.case.source == "upstream":
            newest = max(known, key=lambda s: s.checked)
            case = cd.case.model_copy(update={"issue_state": newest.state, "issue_checked": newest.checked.isoformat()})
            cd = dataclasses.replace(cd, case=case)
        out.append(cd)
    return out
