"""The release an issue that names none most likely ran: the newest torch release published before the day the issue
was opened (a release published that same day is not taken: the report was most likely written on the one before).
The days are PyPI's (torch_release_dates.yaml, beside this module)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml
from packaging.version import Version

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
