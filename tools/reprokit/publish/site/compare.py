"""The compare view (compare.html): any two recorded columns, a column being one target's torch release ("cpu@2.13.0";
two releases of a target, or two targets), side by side, the cases whose repro verdicts differ first, then those
recorded on one side only, then those that agree. The page's address is the view (`?a=cpu@2.13.0&b=cpu@2.14.1`); its
default, the target's previous release against the one its report shows, is rendered in the page, so that without
JavaScript it is complete.

Two columns differ on a case where one of its runs (variant and dtype) has another verdict in its current record (as
the views give them: the newest build's where builds disagree), as the changes pages count a change
(views.version_changes): a flaky or machine-dependent verdict on either side is no difference, and is marked so."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from reprokit.model.records import Record
from reprokit.model.verdict import Role, Verdict
from reprokit.publish.render import Published


class Differs(str, Enum):
    """Whether two columns differ on a case, in the order rows are listed: a skip on one side and a run on the other
    is no difference of verdicts (nothing was observed on one side), and is listed apart. Compared by member; the
    value is the word the page prints (its `differs` column and data-differs) and compare.js computes alike."""

    DIFFER = "yes"
    SKIP_VS_RAN = "skipped vs ran"
    ONE_SIDE = "one side"
    SAME = "no"

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]


DIFFER, SKIP_VS_RAN, ONE_SIDE, SAME = Differs
ORDER = tuple(Differs)
SKIPPED = str(Verdict.SKIPPED)
UNCOMPARED = "~"  # a run's verdict that is never a difference (flaky, machine-dependent)


@dataclass(frozen=True)
class Column:
    key: str  # target@release, the address's value
    target: str
    release: str

    @property
    def label(self) -> str:
        return f"{self.target}, torch {self.release}"


@dataclass(frozen=True)
class Compared:
    case: str
    a: str  # the case's repro verdicts in column a, as words ("" where not recorded)
    b: str
    differs: Differs


@dataclass(frozen=True)
class Comparison:
    columns: list[Column]
    # case -> column key -> (its verdicts in words, {variant@dtype: verdict, or UNCOMPARED}): the page's JSON
    verdicts: dict[str, dict[str, tuple[str, dict[str, str]]]]
    a: Column | None  # the default view's columns
    b: Column | None
    rows: list[Compared]  # the default view's rows, in the listed order

    @property
    def differing(self) -> int:
        """How many of the default view's cases differ (the page's count)."""
        return sum(r.differs is DIFFER for r in self.rows)


def verdict_words(records: list[Record]) -> tuple[str, dict[str, str]]:
    """One column's verdicts of a case in words ("reproduces"; "repro: reproduces; fixed: fix-works"; the dtype
    where it ran in several; a flaky or machine-dependent verdict marked), and what the comparison compares."""
    mine = sorted(records, key=lambda r: (Role.of(r.variant) is not Role.REPRO, r.variant, r.dtype))
    variants, dtypes = len({r.variant for r in mine}) > 1, len({r.dtype for r in mine}) > 1
    words = "; ".join(
        f"{r.variant}{'@' + r.dtype if dtypes else ''}: " * (variants or dtypes)
        + str(r.verdict)
        + " (machine-dependent)" * r.machine_dependent
        for r in mine
    )
    return words, {
        f"{r.variant}@{r.dtype}": UNCOMPARED if r.machine_dependent or r.verdict is Verdict.FLAKY else str(r.verdict)
        for r in mine
    }


def differs(a: tuple[str, dict[str, str]] | None, b: tuple[str, dict[str, str]] | None) -> Differs:
    if not (a and b):
        return ONE_SIDE
    pairs = [(v, b[1][k]) for k, v in a[1].items() if k in b[1] and UNCOMPARED not in (v, b[1][k]) and v != b[1][k]]
    if any(SKIPPED not in pair for pair in pairs):
        return DIFFER
    return SKIP_VS_RAN if pairs else SAME


def compare(verdicts: dict[str, dict[str, tuple[str, dict[str, str]]]], a: str, b: str) -> list[Compared]:
    """Every case recorded in either column, those that differ first, then one side only, then the same (by case)."""
    rows = []
    for case, by_column in verdicts.items():
        left, right = by_column.get(a), by_column.get(b)
        if left or right:
            rows.append(Compared(case, left[0] if left else "", right[0] if right else "", differs(left, right)))
    return sorted(rows, key=lambda r: (ORDER.index(r.differs), r.case))


def comparison(p: Published) -> Comparison:
    """Every column of every recorded target and the default view: the first target's release before the one its
    report shows, against that one."""
    columns, known = [], {cd.case.id for cd in p.cases}
    verdicts: dict[str, dict[str, tuple[str, dict[str, str]]]] = {}  # as Comparison.verdicts
    for target, every in p.histories.items():
        for release, records in every.items():
            column = Column(f"{target}@{release}", target, release)
            columns.append(column)
            mine: dict[str, list[Record]] = {}
            for rec in records:
                if rec.case in known:
                    mine.setdefault(rec.case, []).append(rec)
            for case, recs in mine.items():
                verdicts.setdefault(case, {})[column.key] = verdict_words(recs)
    verdicts = dict(sorted(verdicts.items()))
    a = b = None
    if p.views:
        target, view = next(iter(p.views.items()))
        history = list(p.histories[target])
        shown = history.index(view.release)
        b = next(c for c in columns if c.key == f"{target}@{view.release}")
        a = next(c for c in columns if c.key == f"{target}@{history[max(0, shown - 1)]}")
    return Comparison(columns, verdicts, a, b, compare(verdicts, a.key, b.key) if a and b else [])
