"""The grid of one target (grid-<target>.html): a row per case, a column per recorded torch release (oldest first, by
version), each cell the repro's verdict per dtype with a permalink `#case/target/release` and the error's first
line. Built from the same rows as the record list, so both pages show the same verdicts."""

from __future__ import annotations

from dataclasses import dataclass

from reprokit.publish.render import Published
from reprokit.publish.site_rows import Cell, Row, slug


@dataclass(frozen=True)
class GridCell:
    anchor: str  # the cell's id and permalink: case/target/release
    lines: list[tuple[str, Cell]]  # (dtype, the repro's verdict), one per recorded dtype; dtype "" when only one

    @property
    def rank(self) -> str:
        """What a sort by this column compares: the first dtype's verdict, in the legend's order."""
        return self.lines[0][1].rank if self.lines else "z"

    @property
    def tip(self) -> str:
        """The error's first line (or why it did not run), per dtype: shown on hover and focus."""
        return "; ".join(f"{dtype}: {cell.short}" if dtype else cell.short for dtype, cell in self.lines
                         if cell.detail)


@dataclass(frozen=True)
class GridRow:
    case: str
    category: str
    source: str
    version: str  # "earlier case version" when a shown record ran another version of the case
    current: str  # the verdicts on the target's current release, for the verdict filter
    cells: list[GridCell | None]  # one per release column; None where the release has no record of the case


@dataclass(frozen=True)
class Grid:
    target: str
    file: str  # grid-<target>.html
    releases: list[str]  # the columns, oldest first
    current: str  # the release the target's reports show
    rows: list[GridRow]

    @property
    def verdicts(self) -> list[str]:
        """The verdicts the current release shows, in the legend's order (the filter's values)."""
        seen = {word for row in self.rows for word in row.current.split()}
        order = {cell.word: cell.rank for row in self.rows for grid_cell in row.cells if grid_cell
                 for _, cell in grid_cell.lines}
        return sorted(seen, key=lambda word: order.get(word, word))


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
        releases, current = list(p.histories[target]), p.views[target].release
        rows = []
        for case_id, by_release in sorted(cases.items()):
            first = next(iter(by_release.values()))[0]
            cells = []
            for release in releases:
                recorded = [r for r in by_release.get(release, []) if r.repro]
                several = len(recorded) > 1
                cells.append(GridCell(cell_anchor(case_id, target, release),
                                      [(r.dtype if several else "", r.repro) for r in recorded]) if recorded else None)
            now = " ".join(dict.fromkeys(r.repro.word for r in by_release.get(current, []) if r.repro))
            version = next((r.version for rs in by_release.values() for r in rs if r.version), "")
            rows.append(GridRow(case_id, first.category, first.source, version, now, cells))
        out.append(Grid(target, grid_file(target), releases, current, rows))
    return out
