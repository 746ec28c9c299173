"""feed.xml: an Atom feed of verdict changes between consecutive recorded torch releases, one entry per change
(site_changes.py), the newest release first. Entry ids are name-based UUIDs of the change, and each entry is dated
by the record that showed it: the same store gives the same feed, whenever it is built."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from reprokit.publish.site_changes import Change, ReleaseChanges
from reprokit.publish.site_stamp import UNKNOWN, BuildStamp

FEED_ID = uuid.uuid5(uuid.NAMESPACE_URL, "reprokit:verdict-changes")


@dataclass(frozen=True)
class Entry:
    change: Change

    @property
    def id(self) -> str:
        c = self.change
        return f"urn:uuid:{uuid.uuid5(FEED_ID, f'{c.target}/{c.previous}/{c.release}/{c.after.key}')}"

    @property
    def updated(self) -> str:
        return self.change.after.recorded_at

    @property
    def title(self) -> str:
        c = self.change
        return (f"{c.target}, torch {c.release}: {c.after.key} {c.kind}: {c.before.verdict} on {c.previous} -> "
                f"{c.after.verdict}")


def entries(releases: list[ReleaseChanges]) -> list[Entry]:
    """Every change, the newest release first (fixed, then regressed, then the rest within a release)."""
    return [Entry(c) for rc in reversed(releases) for c in rc.changes]


def feed_updated(found: list[Entry], stamp: BuildStamp) -> str:
    """The newest entry's date; the commit's date for a feed without entries (Atom needs a date: the epoch where
    git could not say)."""
    return max((e.updated for e in found), default=stamp.date if stamp.date != UNKNOWN else "1970-01-01T00:00:00Z")
