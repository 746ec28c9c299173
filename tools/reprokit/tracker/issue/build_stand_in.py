"""The releases that stand in for a build no index serves: a nightly (`2.15.0.dev20261001+cpu`), a source build
(`2.10.0a0+git1a2b3c4`) or another pre-release an issue names. First the last stable release published before the
build (what the build's code grew from); where that one shows nothing, the release the build became, where it is
published. Pure: the release days (torch_release_dates.yaml) in, releases out."""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from reprokit.tracker.issue.release_dates import newest_before, published

NIGHTLY_DAY = re.compile(r"\.dev(\d{4})(\d\d)(\d\d)")


@dataclass(frozen=True)
class StandIn:
    build: str  # as the issue names it
    before: str | None  # the last stable release before the build
    became: str | None  # the stable release the build became, where published and newer than `before`

    @property
    def kind(self) -> str:
        if NIGHTLY_DAY.search(self.build):
            return "nightly"
        return "source" if "+git" in self.build else "pre-release"

    def role(self, release: str) -> str:
        """What `release` is to the build, in words."""
        if release == self.became:
            return f"the release the {self.kind} build {self.build} became"
        if release == self.before:
            return f"the last release before the {self.kind} build {self.build}"
        return f"in place of the {self.kind} build {self.build}"

    def unrun_words(self, tried: tuple[str, ...]) -> str:
        """The build not run, and the stand-ins run for it that exit 0 (`tried`), in words."""
        said = f"the {self.kind} build {self.build} the issue reports is served by no index"
        if tried:
            said += f"; torch {' and '.join(tried)}, standing in for it, exit{'s' if len(tried) == 1 else ''} 0 too"
        elif self.before:
            said += f", and torch {self.before}, the last release before it, was not run here"
        return said

    def releases(self) -> tuple[str, ...]:
        """The stand-ins in the order they are tried."""
        return tuple(r for r in (self.before, self.became) if r)


def stand_in(version: str, opened: str = "") -> StandIn | None:
    """The stand-ins for a build (None for a stable release, or what is no version): before a nightly, the newest
    release published before its day; before a source or pre-release build of X.Y.Z, the newest release older than
    X.Y.Z published before the issue was opened (`opened`, an ISO day; any day where empty)."""
    try:
        parsed = Version(version)
    except InvalidVersion:
        return None
    if not (parsed.is_prerelease or parsed.is_devrelease):
        return None
    base = parsed.base_version
    if day := NIGHTLY_DAY.search(version):
        before = newest_before(f"{day.group(1)}-{day.group(2)}-{day.group(3)}")
    else:
        by_day = [r for r, on in published().items() if not opened or on < opened[:10]]
        older = [r for r in by_day if Version(r) < Version(base)]
        before = max(older, key=Version) if older else None
    became = base if base in published() and (before is None or Version(base) > Version(before)) else None
    return StandIn(version, before, became)
