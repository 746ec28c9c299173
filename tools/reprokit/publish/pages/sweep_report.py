"""Render the model sweep: pass rates with denominators beside the article's figures, failing cells, a heatmap."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from tabulate import tabulate

from reprokit.model.records import Record
from reprokit.model.untrusted_text import identifier, md_cell
from reprokit.model.verdict import Verdict
from reprokit.publish.changed_files import write_changed
from reprokit.publish.pages import ci_artifacts
from reprokit.publish.pages.run_facts import machine_text, run_lines
from reprokit.store.views import View

ARTICLE_FAILURE_RATE, ARTICLE_FP8_FAILURE_RATE, ARTICLE_STRUCTURES = 0.632, 0.89, 27


def metrics(rec: Record) -> dict:
    """The cell's own SWEEP_RESULT line (compile time, speedup, accuracy), when it got that far."""
    for line in reversed(rec.stdout_tail.splitlines()):
        if line.startswith("SWEEP_RESULT "):
            return json.loads(line[len("SWEEP_RESULT ") :])
    return {}


def ran(records: list[Record]) -> list[Record]:
    return [r for r in records if r.verdict.ran]


def rate(records: list[Record]) -> str:
    done = ran(records)
    failed = sum(r.verdict.compile_failure for r in done)
    return f"{failed / len(done):.1%} ({failed}/{len(done)})" if done else "—"


def column(rec: Record) -> str:
    return f"{rec.variant}@{rec.dtype}"


def structure(rec: Record) -> str:
    return rec.case.removeprefix("sweep-")


def failing(res: View, measure: str) -> tuple[int, int]:
    """(failing, out of) for a claim's measure: structures failing a cell, or FP8 cells failing."""
    done = ran(res.records)
    if measure == "fp8-cells-failing":
        fp8 = [r for r in done if r.dtype.startswith("float8")]
        return sum(r.verdict.compile_failure for r in fp8), len(fp8)
    by_structure = defaultdict(list)
    for r in done:
        by_structure[structure(r)].append(r)
    return sum(any(r.verdict.compile_failure for r in rs) for rs in by_structure.values()), len(by_structure)


def missing_cells(res: View) -> int:
    """Cells of the grid with no current record: the grid is the largest plan of the runs shown (a resumed or
    forgotten-and-rerun part plans less), counted where one of them left cells unstarted. A plan counts cells of every
    dtype, so the count is of the whole grid's cells (an FP8 rate is whole only where the grid is)."""
    ids = {r.run_id for r in res.records}
    runs = [h for h in res.runs if h.run_id in ids]
    if not runs or not any(h.not_started for h in runs):
        return 0
    return max(0, max(h.planned for h in runs) - len(res.records))


def superseded_line(res: View) -> str:
    return (
        f"**Superseded:** {res.superseded} cells of torch {res.release} were recorded with an earlier sweep "
        "(`sweep/cell.py`, `grid.yaml` or a structure changed since): they are history, shown nowhere and in no "
        "rate; run the sweep again to judge it."
    )


def summary_rows(res: View) -> list[list]:
    done = ran(res.records)
    any_fail, structures = failing(res, "structures-failing")
    default = [r for r in done if r.variant == "inference-default" and r.dtype == "float32"]
    fp8 = [r for r in done if r.dtype.startswith("float8")]
    rows = [
        ["cells failing (error or inaccurate)", rate(done), f"{ARTICLE_FAILURE_RATE:.1%}"],
        [
            "structures failing at least one cell",
            f"{any_fail / structures:.1%} ({any_fail}/{structures})" if structures else "—",
            f"{ARTICLE_FAILURE_RATE:.1%} of {ARTICLE_STRUCTURES}",
        ],
        ["structures failing the plain call (inference, default, float32)", rate(default), "—"],
    ]
    if fp8:
        rows.append(["FP8 cells failing", rate(fp8), f"{ARTICLE_FP8_FAILURE_RATE:.0%}"])
    return rows


def render_target(res: View, description: str, heatmap: str | None) -> str:
    if not res.records:  # every cell superseded (views.current): nothing of it is shown as measured
        return "\n".join([f"# Model sweep on `{res.target}`: {description}", "", superseded_line(res), ""])

    # No header where the store holds the records but not their runs' headers (a store folder imported without its
    # runs file): the page is rendered, not a smoke run, as the site's summary reads it.
    smoke = res.header is not None and res.header.smoke
    missing = missing_cells(res)
    lines = [
        f"# Model sweep on `{res.target}`: {description}",
        "",
        f"Recorded on {machine_text(res.environment)}.  ",
        *run_lines(res),
        f"{len(res.records)} cells in all{' (smoke subset)' if smoke else ''}.",
        "",
        *(
            [
                f"**Incomplete:** {missing} cells of the grid are not recorded (not started before the "
                "run's deadline, or dropped with `reprokit forget`); they are left out of every rate below.",
                "",
            ]
            if missing > 0
            else []
        ),
        *([superseded_line(res), ""] if res.superseded else []),
        "A cell passes when the compiled model runs and is as accurate as PyTorch's dashboard requires "
        "(`torch._dynamo.utils.same` against a float64 reference); a cell whose structure fails in eager, or an FP8 "
        "cell in which no Linear became a float8 Linear, is skipped and counts in no rate. The article's 63.2% cannot be k/27 for any k "
        "(17/27 = 63.0%), so it is shown beside both a cell rate and a structure rate.",
        "",
        tabulate(summary_rows(res), headers=["measure", "measured", "article"], tablefmt="github"),
        "",
        "## Failure rate per configuration",
        "",
    ]
    by_col = defaultdict(list)
    for r in res.records:
        by_col[column(r)].append(r)
    lines.append(
        tabulate(
            [[c, rate(rs)] for c, rs in sorted(by_col.items())],
            headers=["mode-config@dtype", "failing"],
            tablefmt="github",
        )
    )
    if heatmap:
        lines += ["", f"![structure x configuration]({heatmap})"]
    failing = [r for r in res.records if r.verdict.compile_failure]
    lines += ["", f"## Failing cells ({len(failing)})", ""]
    rows = [
        [
            structure(r),
            column(r),
            md_cell(r.stage),
            f"`{identifier(r.exception or r.status).rsplit('.', 1)[-1]}`",
            md_cell(r.headline() or r.why, 100),
        ]
        for r in sorted(failing, key=lambda r: r.key)
    ]
    lines.append(
        tabulate(rows, headers=["structure", "cell", "stage", "error", "message"], tablefmt="github")
        if rows
        else "None."
    )
    passing = [(structure(r), column(r), metrics(r)) for r in res.records if r.verdict is Verdict.DOES_NOT_REPRODUCE]
    speed = [(s, c, m["speedup"], m["compile_seconds"]) for s, c, m in passing if m.get("speedup")]
    if speed:
        lines += [
            "",
            "## Compile time and speedup of the passing cells",
            "",
            tabulate(
                sorted(speed),
                headers=["structure", "cell", "speedup over eager", "compile s"],
                tablefmt="github",
                floatfmt=".2f",
            ),
        ]
    lines.append("")
    return "\n".join(lines)


def write_heatmap(res: View, path: Path) -> bool:
    cols = sorted({column(r) for r in res.records})
    rows = sorted({structure(r) for r in res.records})
    value = {
        Verdict.DOES_NOT_REPRODUCE: 0,
        Verdict.SKIPPED: 1,
    }  # anything else recorded failed (2); unrecorded is grey (1)
    present = {(structure(r), column(r)): value.get(r.verdict, 2) for r in res.records}
    grid = [[present.get((s, c), 1) for c in cols] for s in rows]
    return ci_artifacts.save_grid(
        grid,
        rows,
        cols,
        ["#2e7d32", "#bdbdbd", "#c62828"],
        path,
        size=(1.0 + 0.45 * len(cols), 1.0 + 0.28 * len(rows)),
        title=f"{res.target}: green passes, red fails, grey not run",
        col_labels={"rotation": 60, "ha": "right", "fontsize": 7},
        row_fontsize=7,
    )


def write_reports(out: Path, sweeps: dict[str, View], descriptions: dict[str, str]) -> list[Path]:
    written = []
    for name, res in sweeps.items():
        png = out / name / "sweep-heatmap.png"
        if not res.records:  # every cell superseded: the page says so; no grid to draw
            md = out / f"{name}-sweep.md"
            written += [md] if write_changed(md, render_target(res, descriptions.get(name, ""), None)) else []
            continue
        png.parent.mkdir(parents=True, exist_ok=True)  # a fresh --out folder has no per-target folder yet
        md = out / f"{name}-sweep.md"
        written += (
            [md]
            if write_changed(md, render_target(res, descriptions.get(name, ""), f"{name}/sweep-heatmap.png"))
            else []
        )
        written += [png] if write_heatmap(res, png) else []
    return written


def headline_claim(sweeps: dict[str, View]) -> list[str]:
    """The article's headline figure beside what each complete sweep measured (every cell of its grid recorded, not
    the smoke subset); an incomplete one is named as not judged, never rated on the cells it happens to have."""
    said = []
    for name, res in sweeps.items():
        any_fail, structures = failing(res, "structures-failing")
        torch = res.environment.get("torch", "?")
        smoke = res.header is not None and res.header.smoke
        if smoke or res.superseded or (missing := missing_cells(res)):
            why = (
                "the smoke subset"
                if smoke
                else f"{res.superseded} cells superseded: the sweep changed since they were recorded"
                if res.superseded
                else f"{missing} of its cells not recorded"
            )
            said.append(f"- `{name}`: not judged ({why}).")
        elif structures:
            said.append(
                f"- `{name}` (torch {torch}, on {machine_text(res.environment).split(',')[0]}; all "
                f"{len(res.records)} cells of its grid recorded): {any_fail} of {structures} structures "
                f"({any_fail / structures:.1%}) fail at least one cell."
            )
    if not said:
        return []
    return [
        f"**The headline claim**, {ARTICLE_FAILURE_RATE:.1%} of {ARTICLE_STRUCTURES} model structures failing "
        "under torch.compile, against the complete sweeps:",
        "",
        *said,
        "",
    ]


def index_section(sweeps: dict[str, View]) -> list[str]:
    if not sweeps:
        return []
    rows = []
    for name, res in sweeps.items():
        measured = {row[0]: row[1] for row in summary_rows(res)}
        rows.append(
            [
                f"[`{name}`]({name}-sweep.md)",
                machine_text(res.environment) if res.header else "—",
                measured["cells failing (error or inaccurate)"],
                measured["structures failing at least one cell"],
                measured.get("FP8 cells failing", "—"),
                f"{sum(h.wall_seconds for h in res.runs):.0f} s"
                + (" (smoke)" if res.header is not None and res.header.smoke else "")
                + (f" (incomplete: {missing} cells not recorded)" if (missing := missing_cells(res)) else "")
                + (f" (superseded: {res.superseded} cells)" if res.superseded else ""),
            ]
        )
    return [
        "## Model-structure sweep",
        "",
        *headline_claim(sweeps),
        f"The article's headline: {ARTICLE_FAILURE_RATE:.1%} of {ARTICLE_STRUCTURES} structures fail; "
        f"{ARTICLE_FP8_FAILURE_RATE:.0%} with FP8 on H100. Measured, as torch.compile failure rates only: a "
        "cell whose structure already fails in eager is skipped, and an FP8 cell counts only when a float8 Linear "
        "was created and compiled (a structure with none is skipped); wall is the sum over the runs shown:",
        "",
        tabulate(
            rows,
            headers=[
                "target",
                "recorded on",
                "cells failing",
                "structures failing a cell",
                "FP8 cells failing",
                "wall",
            ],
            tablefmt="github",
        ),
        "",
    ]
