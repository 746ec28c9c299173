"""feed.xml: an Atom feed of verdict changes between consecutive recorded torch releases, one entry per change
(site/changes.py), the newest release first. Entry ids are name-based UUIDs of the change.

Entries are dated by release, so that a reader sorting by date lists them as the releases go: a release's date is the
latest `recorded_at` of the records its changes compare (when the store first showed them), raised where needed to a
second after the previous release's, so that dates rise with the releases and no entry is dated before its records.
Links are absolute when the site's address is configured (`reprokit site --site-url`), relative to the feed otherwise.
The same store gives the same feed, whenever it is built."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from reprokit.model.schema import InputError
from reprokit.publish.site.changes import Change, ReleaseChanges
from reprokit.publish.site.stamp import UNKNOWN, BuildStamp

FEED_ID = uuid.uuid5(uuid.NAMESPACE_URL, "reprokit:verdict-changes")


@dataclass(frozen=True)
class Entry:
    change: Change
    updated: str  # the release's date (module docstring), ISO 8601 in UTC

    @property
    def id(self) -> str:
        c = self.change
        return f"urn:uuid:{uuid.uuid5(FEED_ID, f'{c.target}/{c.previous}/{c.release}/{c.after.key}')}"

    @property
    def title(self) -> str:
        c = self.change
        return (
            f"{c.target}, torch {c.release}: {c.after.key} {c.kind}: {c.before.verdict} on {c.previous} -> "
            f"{c.after.verdict}"
        )


def _parsed(stamp: str) -> datetime:
    when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def release_dates(releases: list[ReleaseChanges]) -> dict[str, str]:
    """Release -> its entries' date, for the releases with changes (oldest first in, rising dates out)."""
    out, previous = {}, None
    for rc in releases:
        if not rc.changes:
            continue
        when = max(_parsed(r.recorded_at) for c in rc.changes for r in (c.before, c.after))
        if previous is not None and when <= previous:
            when = previous + timedelta(seconds=1)
        out[rc.release], previous = when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), when
    return out


def entries(releases: list[ReleaseChanges]) -> list[Entry]:
    """Every change, the newest release first (fixed, then regressed, then the rest within a release)."""
    dates = release_dates(releases)
    return [Entry(c, dates[rc.release]) for rc in reversed(releases) for c in rc.changes]


def feed_updated(found: list[Entry], stamp: BuildStamp) -> str:
    """The newest entry's date; the commit's date for a feed without entries (Atom needs a date: the epoch where
    git could not say)."""
    return max((e.updated for e in found), default=stamp.date if stamp.date != UNKNOWN else "1970-01-01T00:00:00Z")


def site_address(url: str | None) -> str:
    """The site's address as links are built on it: "" (relative links) or an http(s) URL ending in "/"."""
    if not url:
        return ""
    if not url.startswith(("https://", "http://")) or any(ch in url for ch in " \"'<>\n\t"):
        raise InputError(
            f"--site-url {url!r}: give the site's address as an http(s) URL (https://owner.github.io/repo/)"
        )
    return url if url.endswith("/") else url + "/"
