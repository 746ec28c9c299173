"""The order of torch releases: one rule for every list of releases (the store's views and pages, bisect, triage).

Releases compare as versions (PEP 440: 2.13.0 < 2.13.1 < 2.14.0.dev20260101 < 2.14.0), never as text ("2.9.0" would
sort after "2.13.0"). What is not a version (a path to an interpreter, the label "nightly", a torch that printed
nothing readable) has no place among them, and callers differ on where it goes, each for its own reason: `labels`
says which, and such texts order among themselves by their text, so that a list sorts the same on every machine.
"""

from __future__ import annotations

from typing import Literal

from packaging.version import InvalidVersion, Version

Labels = Literal["first", "last", "nightly-last"]


def release_key(text: str, labels: Labels = "first") -> tuple:
    """A sort key, oldest release first. `labels`, for what is not a version: "first" before every release (the
    store: a record's torch that is no version is shown, never taken as the newest); "last" after every release
    (bisect: a release given by name, such as nightly, is newer than the recorded ones); "nightly-last" the label
    nightly after every release and any other text first (triage: an interpreter's path not yet named by the release
    it holds is never taken as newer than the reported release)."""
    try:
        return (1, Version(text))
    except InvalidVersion:
        after = labels == "last" or (labels == "nightly-last" and text == "nightly")
        return (2 if after else 0, text)
