"""The grid of one target (grid-<target>.html): a row per case, a column per recorded torch release (oldest first, by
version), each cell the repro's verdict per dtype with a permalink `#case/target/release` and the error's first
line. Built from the same rows as the record list, so both pages show the same verdicts."""

from __future__ import annotations

from dataclasses import dataclass, replace

from reprokit.model.releases import release_key
from reprokit.model.verdict import Verdict, is_change
from reprokit.publish.glossary import SHORT_WORD
from reprokit.publish.render import Published
from reprokit.publish.site.rows import HISTORY, MACHINE_DEPENDENT, VERDICT_RANK, Cell, Row, slug


@dataclass(frozen=True)
class GridCell:
    anchor: str  # the cell's id and permalink: case/target/release
    lines: list[tuple[str, Cell]]  # (label, the repro's verdict), one per recorded dtype (label "" when only one),
    # labelled with the torch build too where builds of the release disagree (a line per build)
    previous: str = ""  # the previous release recording the case, where a verdict differs from it ("" otherwise)
    was: str = ""  # the verdicts on that release, as its cell's tip says them
    history: str = ""  # a run that is no current record (the case's last run on the target): when, on what, why

    @property
    def rank(self) -> str:
        """What a sort by this column compares: the first dtype's verdict, in the legend's order."""
        return self.lines[0][1].rank if self.lines else "z"

    @property
    def words(self) -> str:
        return ", ".join(f"{dtype}: {shown_word(cell)}" if dtype else shown_word(cell) for dtype, cell in self.lines)

    @property
    def tip(self) -> str:
        """The verdicts, the change from the previous release and the error's first line (or why it did not run),
        per dtype: shown on hover and focus, and the cell link's description."""
        shorts = [
            (dtype, cell.short.removeprefix(f"{MACHINE_DEPENDENT}: ")) for dtype, cell in self.lines if cell.detail
        ]  # the word already says machine-dependent: its detail names each machine's verdict
        details = "; ".join(f"{dtype}: {short}" if dtype else short for dtype, short in shorts)
        changed = f" (was {self.was} on {self.previous})" if self.previous else ""
        history = f" (history: {self.history})" if self.history else ""
        return f"{self.words}{changed}{history}" + (f". {details}" if details else "")


@dataclass(frozen=True)
class GridRow:
    case: str
    category: str
    source: str
    version: str  # "earlier case version" when a shown record ran another version of the case
    verdicts: str  # "release=verdict ..." for every release and dtype: the verdict filter, on any release
    cells: list[GridCell | None]  # one per release column; None where the release has no record of the case
    history: bool = False  # the case's only run on the target is history (no current record): the row says so


@dataclass(frozen=True)
class Grid:
    target: str
    file: str  # grid-<target>.html
    releases: list[str]  # the columns, oldest first: every recorded release, and a history run's release
    current: str  # the release the target's reports show
    rows: list[GridRow]

    @property
    def verdicts(self) -> list[str]:
        """The verdicts of any release, in the legend's order (the verdict filter's values)."""
        seen = {
            word: VERDICT_RANK[word if word == MACHINE_DEPENDENT else Verdict(word)]
            for row in self.rows
            for grid_cell in row.cells
            if grid_cell and not grid_cell.history
            for _, cell in grid_cell.lines
            for word in cell.words
        }
        return sorted(seen, key=seen.__getitem__) + ([HISTORY] if any(r.history for r in self.rows) else [])


def shown_word(cell: Cell) -> str:
    """A cell's word in words: the verdict's, or "machine-dependent" (never one machine's verdict as the release's)."""
    return MACHINE_DEPENDENT if cell.machines else cell.word


def grid_file(target: str) -> str:
    return f"grid-{slug(target)}.html"


def cell_anchor(case: str, target: str, release: str) -> str:
    return f"{case}/{slug(target)}/{slug(release)}"


def grids(p: Published, every: list[Row]) -> list[Grid]:
    """One grid per target with recorded cases, in matrix.yaml's order."""
    by_target: dict[str, dict[str, dict[str, list[Row]]]] = {t: {} for t in p.histories}
    for row in every:
        by_target[row.target].setdefault(row.case, {}).setdefault(row.release, []).append(row)
    out = []
    for target, cases in by_target.items():
        releases = sorted(
            {
                *p.histories[target],
                *(r.release for by_release in cases.values() for rs in by_release.values() for r in rs),
            },
            key=lambda rel: (release_key(rel), rel),
        )
        rows = [grid_row(target, case_id, by_release, releases) for case_id, by_release in sorted(cases.items())]
        out.append(Grid(target, grid_file(target), releases, p.views[target].release, rows))
    return out


def local_build(build: str) -> str:
    """The part of a torch build a release's column does not say: "+cpu" of "2.14.1+cpu" (a build without one: whole)."""
    return "+" + build.partition("+")[2] if "+" in build else build


def _cell_label(row: Row, repro: Cell, several: bool) -> str:
    """A verdict's label in its cell (`repro`: the row's repro cell): its dtype where the cell has several; where
    builds of the release disagree, the verdict's word and the build's local part."""
    build = f"{SHORT_WORD[Verdict(repro.word)]} {local_build(row.build)}" if row.build else ""
    return " ".join(part for part in (row.dtype if several else "", build) if part)


def _shown(row: Row, repro: Cell) -> Cell:
    """The repro's cell (`repro`: the row's, which grid_row has checked is there) as the grid shows it: where builds
    of the release disagree, the machine each build ran on leads its detail (the builds' verdicts may differ by
    machine, not by build)."""
    if row.build and row.machine:
        return replace(repro, detail=f"on {row.machine}" + (f"; {repro.detail}" if repro.detail else ""))
    return repro


@dataclass
class _Word:
    """A grid cell's verdict word as verdict.is_change reads a record (a machine-dependent one never reaches it)."""

    verdict: Verdict
    variant: str = "repro"


def changed_word(before: str, after: str) -> bool:
    """The one rule for "changed" (verdict.is_change): two verdicts that ran and decide differ; a skip on either side
    (a run that newly ran, or no longer did) and a flaky verdict are no change."""
    return is_change(_Word(Verdict(before)), _Word(Verdict(after)))


def grid_row(target: str, case_id: str, by_release: dict[str, list[Row]], releases: list[str]) -> GridRow:
    """A case's cells, one per release column; a cell is marked where a dtype's verdict changed from the previous
    release that recorded the case (changed_word: a machine-dependent verdict, a skip, a flaky verdict are never a
    change). A history run's cell (a case with no current record on the target) is marked so, and compared with
    nothing."""
    cells: list[GridCell | None] = []
    before: tuple[str, dict[str, str], str] | None = None  # (release, dtype -> verdict, the cell's words)
    for release in releases:
        # each row with its repro cell (a history run of a fix alone, where no repro ran: that fix's)
        recorded = [
            (r, shown_cell)
            for r in by_release.get(release, [])
            if (shown_cell := r.repro or (r.fixed or r.article_fix if r.history else None)) is not None
        ]
        if not recorded:
            cells.append(None)
            continue
        several = len({r.dtype for r, _ in recorded}) > 1
        labels = [_cell_label(r, repro, several) for r, repro in recorded]
        shown = list(zip(labels, [_shown(r, repro) for r, repro in recorded], strict=True))
        if any(r.history for r, _ in recorded):
            cells.append(
                GridCell(
                    cell_anchor(case_id, target, release),
                    shown,
                    history=next(r.history for r, _ in recorded if r.history),
                )
            )
            continue
        now = {r.dtype: repro.word for r, repro in recorded if not repro.machines}  # machine-dependent: never a change
        changed_from = (
            before
            if before is not None and any(d in before[1] and changed_word(before[1][d], w) for d, w in now.items())
            else None
        )
        cell = GridCell(
            cell_anchor(case_id, target, release),
            shown,
            changed_from[0] if changed_from else "",
            changed_from[2] if changed_from else "",
        )
        cells.append(cell)
        before = (release, now, cell.words)
    first = next(iter(by_release.values()))[0]
    verdicts = " ".join(
        dict.fromkeys(
            f"{r.release}={word}"
            for rs in by_release.values()
            for r in rs
            for word in ([HISTORY] if r.history else r.repro.words if r.repro else [])
        )
    )
    version = next((r.version for rs in by_release.values() for r in rs if r.version), "")
    history = all(r.history for rs in by_release.values() for r in rs)
    return GridRow(case_id, first.category, first.source, version, verdicts, cells, history)
