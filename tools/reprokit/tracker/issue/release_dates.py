"""The release an issue that names none most likely ran: the newest torch release published before the day the issue
was opened (a release published that same day is not taken: the report was most likely written on the one before).
The days are PyPI's (torch_release_dates.yaml, beside this module)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import yaml
from packaging.version import Version

from reprokit.tracker.issue.issue_json import MAINTAINERS, Issue

DATES = Path(__file__).with_name("torch_release_dates.yaml")


@cache
def published() -> dict[str, str]:
    """Each release and the day it reached PyPI (YYYY-MM-DD), oldest first."""
    days = {str(v): str(d) for v, d in yaml.safe_load(DATES.read_text(encoding="utf-8")).items()}
    return dict(sorted(days.items(), key=lambda item: Version(item[0])))


def newest_before(day: str) -> str | None:
    """The newest release published before `day` (an ISO date or time; only its date counts), None when the day is
    unreadable or older than every release here."""
    day = day[:10]
    if len(day) != 10 or day[4] != "-" or day[7] != "-":
        return None
    earlier = [release for release, on in published().items() if on < day]
    return max(earlier, key=Version) if earlier else None


def expected_to_fail_until(issue: Issue) -> tuple[str, str] | None:
    """The day a release must be published after for its failure to tell a closed issue anything, and that day's
    origin in words: the day it was closed; without it, the newest release's at the last maintainer comment (or at
    the opening). None for an open issue."""
    if not issue.closed:
        return None
    if issue.closed_at[:10]:
        return issue.closed_at[:10], f"closed on {issue.closed_at[:10]}"
    said = [c.created for c in issue.comments if c.association in MAINTAINERS and c.created] or [issue.created]
    day = max(said)[:10]
    newest = newest_before(day)
    when = published().get(newest or "", "")
    return (when, f"torch {newest} was the newest release at {day}") if when else None


def published_after(release: str, day: str) -> bool:
    """Whether `release` came out after `day`: PyPI's day for a release, a dev build's own date, a nightly today."""
    if release == "nightly":
        return True
    if m := re.search(r"\.dev(\d{4})(\d\d)(\d\d)", release):
        return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" > day
    on = published().get(release.split("+")[0], "")
    return bool(on) and on > day


def source_words(reported: str | None, by_date: str = "") -> str:
    """Where the release a triage ran as the reported one comes from, in words."""
    if by_date and reported:
        return f"the issue names no release; {reported} was the newest when it was opened, on {by_date}"
    return f"the issue names {reported or 'no release'}"


def reported_words(reported_release: str | None, by_date: str) -> str:
    """The reported release in words, with the day that picked it where the issue names none."""
    if reported_release and by_date:
        return f"{reported_release} (the newest release when it was opened, {by_date})"
    return reported_release or "release"


def on_reported(release: str, reported_release: str | None, by_date: str) -> str:
    """Which release the run was, in words: the reported one, the newest at the issue's date, or a stand-in."""
    if release != reported_release:
        return f"torch {release}, standing in for {source_words(reported_release, by_date)}"
    if by_date:
        return f"torch {release}, the newest release when the issue was opened ({by_date})"
    return f"torch {release}, the release the issue reports"
