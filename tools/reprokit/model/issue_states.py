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
from pydantic import ValidationError

from reprokit.model.corpus import CaseDir
from reprokit.model.schema import InputError, OneLine, Strict, describe_error, read_yaml

FILE_NAME = "issue-states.yaml"
ISSUE_NUMBER = re.compile(r"^https://github\.com/pytorch/pytorch/issues/(\d+)$")
HEADER = ("# The state of each pytorch/pytorch issue linked from cases/ (source: upstream), as read from GitHub on\n"
          "# `checked`. Written by .github/workflows/issue-states.yml (`reprokit tracker-states --import`); it\n"
          "# overrides a case.yaml's issue_state / issue_checked. reports/upstream-issues.md is rendered from it.\n"
          "# link: same | related (does the case fail the way the issue reports? read from its thread; related: no\n"
          "# comment from the case); triage / triage_torch / triage_kind: what `reprokit triage N --record` said on that torch.\n")


class Standing(str, Enum):
    """What a triage of an issue's own script says of it (tracker/issue_lifecycle decides it); the words are its
    rendering, and issue-states.yaml keeps the value beside the sentence, so nothing reads the sentence back."""

    STILL = "still reproduces"
    NO_LONGER = "no longer reproduces"
    DIFFERENT = "fails differently"
    DOES_NOT = "does not reproduce"
    NOT_POSTED = "not posted"

    def __str__(self) -> str:
        return self.value

    # str.__format__ takes format_spec positional-only, Enum declares it by name: the same call at runtime
    __format__ = str.__format__  # type: ignore[assignment]

    @classmethod
    def of_line(cls, line: str) -> Standing:
        """The kind of a sentence written before kinds were kept (issue-states.yaml entries of earlier triages)."""
        return next(k for k in cls if line.startswith(k.value)) if any(line.startswith(k.value) for k in cls) \
            else cls.NOT_POSTED


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
    triage_kind: Standing | None = None  # the standing's kind, as data (the sentence above is its rendering)


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
    data = {"issues": {n: {"state": s.state, "checked": s.checked.isoformat(),
                           **{k: v for k, v in s.model_dump(mode="json", include={"link", "link_why", "triage", "triage_kind",
                                                            "triage_torch"}).items()
                              if v is not None}}
                       for n, s in sorted(states.issues.items())}}
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
