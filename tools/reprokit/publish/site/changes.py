"""What changed in each torch release (changes-<release>.html, and the Atom feed): every verdict of a run that differs
from the target's previous recorded release, fixed and regressed first, by the one rule every page asks
(verdict.is_change): a flaky or machine-dependent verdict on either side is no change, nor is a skip on either side (a
run that newly ran, or no longer did, observed nothing on one side: counted apart, as the compare view lists it).

A change is *fixed* when the repro stopped reproducing (reproduces -> does-not-reproduce) or a fix started to work
(fix-broken -> fix-works), *regressed* for the reverse, and *changed* otherwise (a timeout, a different failure): only
the two verdicts of a run that say "the bug is there" or "it is not" decide a direction.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from reprokit.model.records import Record
from reprokit.model.releases import release_key
from reprokit.model.verdict import Verdict, is_change
from reprokit.publish.render import Published
from reprokit.publish.site.grid import cell_anchor, grid_file
from reprokit.publish.site.rows import Cell, slug

FIXED = {(Verdict.REPRODUCES, Verdict.DOES_NOT_REPRODUCE), (Verdict.FIX_BROKEN, Verdict.FIX_WORKS)}
REGRESSED = {(after, before) for before, after in FIXED}
KINDS = ("fixed", "regressed", "changed")


def change_kind(before: Verdict, after: Verdict) -> str:
    if (before, after) in FIXED:
        return "fixed"
    return "regressed" if (before, after) in REGRESSED else "changed"


@dataclass(frozen=True)
class Change:
    target: str
    previous: str  # the target's previous recorded release
    release: str
    before: Record
    after: Record

    @property
    def kind(self) -> str:
        return change_kind(self.before.verdict, self.after.verdict)

    @property
    def was(self) -> Cell:
        return Cell.of(self.before)

    @property
    def now(self) -> Cell:
        return Cell.of(self.after)

    @property
    def link(self) -> str:
        """The grid cell of the case on this release (relative to the site's root)."""
        return f"{grid_file(self.target)}#{cell_anchor(self.after.case, self.target, self.release)}"

    @property
    def order(self) -> tuple:
        return KINDS.index(self.kind), self.after.case, self.after.variant, self.after.dtype


@dataclass(frozen=True)
class ReleaseChanges:
    release: str
    file: str  # changes-<release>.html
    nightly: bool
    compared: list[tuple[str, str, int]]  # (target, previous release, runs recorded on both)
    first_on: list[str]  # targets on which this is the first recorded release (nothing to compare)
    changes: list[Change]  # fixed, then regressed, then the rest; by target in matrix.yaml's order
    newly_ran: int = 0  # runs skipped on the previous release that ran on this one: no change
    no_longer_ran: int = 0  # the reverse

    def count(self, kind: str) -> int:
        return sum(c.kind == kind for c in self.changes)


def changes_file(release: str) -> str:
    return f"changes-{slug(release)}.html"


def is_nightly(release: str) -> bool:
    try:
        return Version(release).is_devrelease
    except InvalidVersion:
        return False


def release_changes(p: Published) -> list[ReleaseChanges]:
    """Every release recorded on any target, oldest first, with its changes against each target's previous one."""
    cases = {c.case.id for c in p.cases}
    every = sorted({rel for history in p.histories.values() for rel in history}, key=lambda r: (release_key(r), r))
    out = []
    for release in every:
        compared, first_on, changes, newly, no_longer = [], [], [], 0, 0
        for target, history in p.histories.items():
            order = list(history)
            if release not in history:
                continue
            at = order.index(release)
            if at == 0:
                first_on.append(target)
                continue
            previous = order[at - 1]
            before = {r.key: r for r in history[previous] if r.case in cases}
            after = [r for r in history[release] if r.case in cases]
            compared.append((target, previous, sum(r.key in before for r in after)))
            changes += [
                Change(target, previous, release, before[r.key], r)
                for r in after
                if r.key in before and is_change(before[r.key], r)
            ]
            both = [(before[r.key].verdict, r.verdict) for r in after if r.key in before]
            newly += sum(not was.ran and now.ran for was, now in both)
            no_longer += sum(was.ran and not now.ran for was, now in both)
        targets = list(p.histories)
        changes.sort(key=lambda c: (c.order[0], targets.index(c.target), *c.order[1:]))
        out.append(
            ReleaseChanges(
                release, changes_file(release), is_nightly(release), compared, first_on, changes, newly, no_longer
            )
        )
    return out
