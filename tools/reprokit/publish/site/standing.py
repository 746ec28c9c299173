"""Where each case stands, in one line per target, and each target's rates per recorded release: what the index and the
grids answer at a glance. Both come from the store's views (machines.standings, the rate functions of
model/verdict.py and model/attribution.py, as reports/README.md computes them): nothing here is written by hand.

    "cpu: fixed in 2.10.0 · h100: does not reproduce (2.11.0)"
    "cpu: reproduces on every recorded release (2.8.0–2.15.0)"
    "cpu: regressed in 2.13.0"
    "cpu on AMD EPYC: reproduces on every recorded release (2.8.0–2.15.0) · cpu on Intel(R) Xeon(R) Processor: ..."
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from reprokit.model.attribution import compile_rate
from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record
from reprokit.model.verdict import Verdict, in_rate, rate_text, reproduce_rate
from reprokit.publish.issue_status import CaseStanding
from reprokit.publish.site.machines import Standings, flat
from reprokit.store.last_runs import LastRun

BAD, GOOD = Verdict.REPRODUCES, Verdict.DOES_NOT_REPRODUCE
WORDS = {BAD: "reproduces", GOOD: "does not reproduce"}


def standing_line(s: CaseStanding) -> str:
    """The repro's story on one target over its recorded releases (oldest first), told by the two verdicts that say
    "the bug is there" or "it is not"; a newer verdict of another kind is added after a semicolon."""
    decisive = [(rel, v) for rel, v in s.verdicts if v in WORDS]
    newest = s.newest
    if not decisive:
        if newest:
            return f"{newest[1]} ({newest[0]})"
        return f"skipped ({s.verdicts[0][0]})" if len(s.verdicts) == 1 else "skipped on every recorded release"
    last_rel, now = decisive[-1]
    start = len(decisive) - 1
    while start > 0 and decisive[start - 1][1] == now:
        start -= 1
    if start > 0:
        line = f"{'regressed' if now is BAD else 'fixed'} in {decisive[start][0]}"
    elif len(s.verdicts) == 1:
        line = f"{WORDS[now]} ({last_rel})"
    elif len(decisive) == len(s.verdicts):
        line = f"{WORDS[now]} on every recorded release ({decisive[0][0]}–{last_rel})"
    else:
        line = f"{WORDS[now]} on {decisive[0][0]}–{last_rel} ({len(decisive)} of {len(s.verdicts)} recorded releases)"
    order = {rel: n for n, (rel, _) in enumerate(s.verdicts)}
    if newest and newest[1] not in WORDS and order[newest[0]] > order[last_rel]:
        line += f"; {newest[1]} on {newest[0]}"
    return line


def case_standings(
    cases: list[CaseDir], found: Standings, last_runs: dict[str, dict[str, LastRun]] | None = None
) -> dict[str, str]:
    """Case id -> its standing on every target that recorded its repro, in matrix.yaml's order (per machine where its
    verdict depends on the machine: site/machines.py), joined by " · "; on a target where the case's runs are all
    history (`last_runs`: target -> case -> its last run there), when and on what it last ran and why that is not
    current."""
    out = {}
    for cd in cases:
        mine = [f"{s.label}: {standing_line(s)}" for s in flat(found.get(cd.case.id, {}))]
        mine += [
            f"{target}: history only, {runs[cd.case.id].text}"
            for target, runs in (last_runs or {}).items()
            if cd.case.id in runs and target not in found.get(cd.case.id, {})
        ]
        out[cd.case.id] = " · ".join(mine) or "no recorded run yet"
    return out


@dataclass(frozen=True)
class ReleaseRates:
    """One recorded release of a target: the torch.compile failure rate and the any-reason rate of its repros."""

    release: str
    compile: tuple[int, int]  # attribution.compile_rate: (torch.compile failures, repros that ran)
    any_reason: tuple[int, int]  # verdict.reproduce_rate: (failed as claimed, repros that ran)

    @property
    def compile_text(self) -> str:
        return rate_text(*self.compile)

    @property
    def any_text(self) -> str:
        return rate_text(*self.any_reason)


def release_rates(every: dict[str, list[Record]], cases: list[CaseDir]) -> list[ReleaseRates]:
    """The two rates of reports/README.md on each recorded release of a target, oldest first (the same functions over
    the same records: on the release a target's report shows, the figures are the report's)."""
    by_id = {c.case.id: c.case for c in cases}
    return [ReleaseRates(rel, compile_rate(records, by_id), reproduce_rate(records)) for rel, records in every.items()]


@dataclass(frozen=True)
class Step:
    """Like with like: the rates of two consecutive recorded releases over the repros that ran on both (their keys:
    case/repro@dtype), and how many ran on one of them only (then the sets differ and the step says so)."""

    before: ReleaseRates  # the previous release's rates over the shared repros
    after: ReleaseRates  # this release's
    only_before: int
    only_after: int

    @property
    def shared(self) -> int:
        return self.after.any_reason[1]

    @property
    def text(self) -> str:
        line = (
            f"over the {self.shared} repros that ran on both {self.before.release} and {self.after.release}: "
            f"torch.compile failures {self.before.compile_text} → {self.after.compile_text}, any reason "
            f"{self.before.any_text} → {self.after.any_text}"
        )
        if self.only_before or self.only_after:
            line += (
                f"; the sets differ ({self.only_before} ran on {self.before.release} only, {self.only_after} on "
                f"{self.after.release} only): the releases' own rates are not like with like"
            )
        return line


def steps(every: dict[str, list[Record]], cases: list[CaseDir]) -> dict[str, Step]:
    """Release -> its step from the previous recorded release (none for the first): both rates over the repros that
    ran on both releases, so that a rate's change between releases is never one of which cases were run."""
    by_id = {c.case.id: c.case for c in cases}
    counted = {rel: {r.key: r for r in records if in_rate(r)} for rel, records in every.items()}
    out = {}
    order = list(counted)
    for previous, release in zip(order, order[1:], strict=False):
        shared = counted[previous].keys() & counted[release].keys()
        mine = {rel: [counted[rel][k] for k in sorted(shared)] for rel in (previous, release)}
        before, after = (
            ReleaseRates(rel, compile_rate(mine[rel], by_id), reproduce_rate(mine[rel])) for rel in (previous, release)
        )
        out[release] = Step(
            before, after, len(counted[previous].keys() - shared), len(counted[release].keys() - shared)
        )
    return out


@dataclass(frozen=True)
class Trend:
    """A small line plot of the two rates across releases, as SVG coordinates: 0 % at the bottom, `top` at the top."""

    width: int
    height: int
    top: str  # the rate at the top of the plot, e.g. "50%" (the smallest tenth above every rate)
    compile_points: str  # "x,y x,y ..." of the torch.compile failure rate
    any_points: str  # of the any-reason rate
    dots: list[tuple[float, float, float, str]]  # (x, y of compile, y of any-reason, the release's label)


def trend(rates: list[ReleaseRates], step: int = 40, height: int = 64, pad: int = 8, left: int = 30) -> Trend:
    fractions = [hit / total if total else 0.0 for r in rates for hit, total in (r.compile, r.any_reason)]
    top = max(1, min(10, math.ceil(max(fractions, default=0) * 10 + 1e-9))) / 10

    def y(hit_total: tuple[int, int]) -> float:
        hit, total = hit_total
        return round(pad + (height - 2 * pad) * (1 - (hit / total if total else 0) / top), 1)

    xs = [left + step * n for n in range(len(rates))]
    compile_ys, any_ys = [y(r.compile) for r in rates], [y(r.any_reason) for r in rates]
    return Trend(
        max(xs, default=left) + pad,
        height,
        f"{top:.0%}",
        " ".join(f"{x},{cy}" for x, cy in zip(xs, compile_ys, strict=True)),
        " ".join(f"{x},{ay}" for x, ay in zip(xs, any_ys, strict=True)),
        [
            (x, cy, ay, f"torch {r.release}: torch.compile failures {r.compile_text}, any reason {r.any_text}")
            for x, cy, ay, r in zip(xs, compile_ys, any_ys, rates, strict=True)
        ],
    )
