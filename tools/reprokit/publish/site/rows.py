"""The site's record list (matrix.html): one `Row` per case and dtype on each target and recorded torch release, each
verdict a `Cell` (symbol and word, never colour alone, and what went wrong), with the filters' values in order."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import overload

from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record
from reprokit.model.releases import release_key
from reprokit.model.untrusted_text import one_line
from reprokit.model.verdict import Role, Verdict
from reprokit.publish.pages.report import recorded_before_change
from reprokit.publish.render import Published
from reprokit.store.views import release_of

HISTORY = "history"  # the filters' word for a run that is no current record (the case's only run on a target)
MACHINE_DEPENDENT = "machine-dependent"  # the word of a verdict another machine did not share (never one machine's)
VERDICT_RANK: dict[str, str] = {
    **{v: f"{n}" for n, v in enumerate(Verdict)},
    MACHINE_DEPENDENT: f"{len(Verdict)}",
}  # legend order
SHORT = 160  # characters of a message shown before its expander


def slug(text: str) -> str:
    """A piece of a file name or a fragment (a target, a torch release): letters, digits, `.`, `_`, `-` only, so
    that no recorded string can name another path or break a URL."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", text) or "-"


def shortened(text: str) -> str:
    """The first line of a message, cut at SHORT characters: what a cell shows before its expander."""
    line = one_line((text or "").split("\n", 1)[0])
    return line if len(line) <= SHORT else line[: SHORT - 1] + "…"


@dataclass(frozen=True)
class Cell:
    """One verdict as every cell shows it: symbol and word (never colour alone), and what went wrong."""

    word: str
    rank: str = ""
    detail: str = ""
    machines: str = ""  # where another machine gave another verdict: each machine's verdict ("" otherwise)
    by_machine: tuple[str, ...] = ()  # where machine-dependent: every machine's verdict word, this record's first

    @property
    def css(self) -> str:
        """The cell's class: its verdict's, or one for every machine-dependent verdict (no one machine's word)."""
        return MACHINE_DEPENDENT if self.machines else self.word

    @property
    def words(self) -> tuple[str, ...]:
        """What the verdict filters match: the verdict, or every machine's, and "machine-dependent"."""
        return (*dict.fromkeys(self.by_machine), MACHINE_DEPENDENT) if self.machines else (self.word,)

    @overload
    @classmethod
    def of(cls, rec: Record, machines: dict[str, str] | None = None) -> Cell: ...
    @overload
    @classmethod
    def of(cls, rec: None, machines: dict[str, str] | None = None) -> None: ...
    @overload
    @classmethod
    def of(cls, rec: Record | None, machines: dict[str, str] | None = None) -> Cell | None: ...
    @classmethod
    def of(cls, rec: Record | None, machines: dict[str, str] | None = None) -> Cell | None:
        """The record's cell; `machines` (run id -> machine) names the machine of a machine-dependent verdict."""
        if rec is None:
            return None
        detail = ""
        if not rec.verdict.ran or (rec.verdict.needs_attention and not rec.exception):
            detail = rec.why
        elif rec.exception and rec.verdict not in (Verdict.DOES_NOT_REPRODUCE, Verdict.FIX_WORKS):
            detail = f"{rec.exception.rsplit('.', 1)[-1]}: {rec.headline()}"
        said = ""
        if rec.machine_dependent:
            others = rec.on_other_machines or {}  # never empty here: machine_dependent is read from it
            mine = (machines or {}).get(rec.run_id, "")
            each = [
                *([f"{rec.verdict} on {mine}"] if mine else []),
                *(f"{verdict} on {machine}" for machine, verdict in sorted(others.items())),
            ]
            said = f"machine-dependent: {'; '.join(each)}, same torch and case content"
            detail = f"{said}. {detail}" if detail else said
            return cls(
                str(rec.verdict),
                VERDICT_RANK[MACHINE_DEPENDENT],
                detail,
                said,
                (str(rec.verdict), *sorted(others.values())),
            )
        return cls(str(rec.verdict), VERDICT_RANK[rec.verdict], detail, said)

    @property
    def short(self) -> str:
        return shortened(self.detail)


@dataclass(frozen=True)
class Row:
    """One case and dtype on one target and torch release: its variants' verdicts and what the repro did."""

    case: str
    category: str
    source: str
    target: str
    release: str
    builds: str
    current: bool  # the release the target's reports show
    dtype: str
    repro: Cell | None
    fixed: Cell | None
    article_fix: Cell | None
    stage: str
    graph_breaks: str
    error: str  # the repro's exception, with its message's headline
    since: str  # 'since 2.9.1' / 'fixed in 2.12.1', on the current release only
    version: str = ""  # "earlier case version" / "case version unknown": the records are not of the case as it is now
    build: str = ""  # the torch build, where builds of the release disagree on the case's current content (a row each)
    machine: str = ""  # the machine the repro ran on, where its verdict differs by build or by machine
    # where the target has no current record of the case: when and on what it last ran and why that run is history
    # (store/last_runs.py); "" for a current record
    history: str = ""

    @property
    def verdicts(self) -> str:
        return " ".join(
            dict.fromkeys(
                [
                    *(w for c in (self.repro, self.fixed, self.article_fix) if c for w in c.words),
                    *([HISTORY] if self.history else []),
                ]
            )
        )

    @property
    def anchor(self) -> str:
        """The row's id on matrix.html: case/target/release@dtype."""
        return f"{self.case}/{slug(self.target)}/{slug(self.release)}@{slug(self.dtype)}" + (
            f"/{slug(self.build)}" if self.build else ""
        )


def source_of(cd: CaseDir) -> str:
    """Where a case comes from: its `source` field when cases grow one, else the article or upstream."""
    return getattr(cd.case, "source", None) or ("article" if cd.case.article else "upstream")


def rows(p: Published) -> list[Row]:
    """Long: one pass over every target's releases builds the rows of the record list and of each case page."""
    cases = {c.case.id: c for c in p.cases}
    out = []
    for target, every in p.histories.items():
        shown = p.views[target].release
        for release, records in every.items():
            grouped: dict[tuple[str, str], dict[str, Record]] = defaultdict(dict)
            for rec in records:
                if rec.case in cases:
                    grouped[(rec.case, rec.dtype)][rec.variant] = rec
            builds = ", ".join(sorted({r.torch for r in records}))
            earlier, unknown = recorded_before_change(records, cases)
            for (case_id, dtype), variants in sorted(grouped.items()):
                for build, mine in per_build(p.splits.get(target, {}), release, variants):
                    repro = mine.get("repro")
                    breaks = (repro.dynamo or {}).get("graph_breaks") if repro else None
                    out.append(
                        Row(
                            case_id,
                            cases[case_id].case.category,
                            source_of(cases[case_id]),
                            target,
                            release,
                            builds,
                            release == shown,
                            dtype,
                            Cell.of(repro, p.machines),
                            Cell.of(mine.get("fixed"), p.machines),
                            Cell.of(mine.get("article_fix"), p.machines),
                            (repro.stage or "") if repro else "",
                            "" if breaks is None else str(breaks),
                            f"{repro.exception}: {repro.headline()}" if repro and repro.exception else "",
                            p.since.get(target, {}).get(f"{case_id}/repro@{dtype}", "") if release == shown else "",
                            "earlier case version"
                            if (case_id, dtype) in earlier
                            else "case version unknown"
                            if (case_id, dtype) in unknown
                            else "",
                            build,
                            p.machines.get(repro.run_id, "") if repro and (build or repro.machine_dependent) else "",
                        )
                    )
    out += last_run_rows(p, cases)
    targets = list(p.histories)
    return sorted(out, key=lambda r: (r.case, targets.index(r.target), release_key(r.release), r.release, r.dtype))


def last_run_rows(p: Published, cases: dict[str, CaseDir]) -> list[Row]:
    """A row for each case whose runs on a recorded target are all history (store/last_runs.py): its newest run there,
    marked with when and on what it ran and why it is not current, so that no page shows the case as never run. It
    counts toward no figure (the rates, changes and comparisons read the current records only)."""
    out = []
    for target, runs in p.last_runs.items():
        if target not in p.histories:
            continue
        for case_id, last in runs.items():
            rec = last.record
            cell = Cell.of(rec, p.machines)
            role = Role.of(rec.variant)
            out.append(
                Row(
                    case_id,
                    cases[case_id].case.category,
                    source_of(cases[case_id]),
                    target,
                    release_of(rec.torch),
                    rec.torch,
                    False,
                    rec.dtype,
                    cell if role is Role.REPRO else None,
                    cell if role is Role.FIX else None,
                    cell if role is Role.ARTICLE_FIX else None,
                    (rec.stage or "") if role is Role.REPRO else "",
                    "",
                    f"{rec.exception}: {rec.headline()}" if rec.exception else "",
                    "",
                    history=last.text,
                )
            )
    return out


def per_build(
    splits: dict[tuple[str, str], list[Record]], release: str, variants: dict[str, Record]
) -> list[tuple[str, dict[str, Record]]]:
    """A case and dtype's variants as one row (build ""), or one row per build where the builds of the release
    disagree on one of its variants (views.build_split): each build's own record of that variant, the shown one of
    the others."""
    split = {v: splits[(release, rec.key)] for v, rec in variants.items() if (release, rec.key) in splits}
    if not split:
        return [("", variants)]
    builds = sorted({r.torch for recs in split.values() for r in recs})
    return [
        (build, {v: next((r for r in split.get(v, []) if r.torch == build), rec) for v, rec in variants.items()})
        for build in builds
    ]


def record_filters(every: list[Row]) -> list[tuple[str, str, list[str]]]:
    """(data attribute, label, values) of each filter of matrix.html, values in a stable order (releases by
    version: 2.8.0 before 2.10.0)."""
    releases = sorted({r.release for r in every}, key=lambda rel: (release_key(rel), rel))
    return [
        ("category", "category", sorted({r.category for r in every})),
        ("source", "source", sorted({r.source for r in every})),
        ("target", "target", list(dict.fromkeys(r.target for r in every))),
        ("release", "torch release", ["current", *releases]),
        ("dtype", "dtype", sorted({r.dtype for r in every})),
        ("stage", "stage", sorted({r.stage for r in every if r.stage})),
        (
            "verdict",
            "verdict",
            [
                str(v)
                for v in [*Verdict, MACHINE_DEPENDENT, HISTORY]
                if any(str(v) in r.verdicts.split() for r in every)
            ],
        ),
    ]
