"""Machine-readable companions of a target's report: JUnit XML for CI, a shields.io badge endpoint, a heatmap.
Deterministic: same records, same bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from xml.sax.saxutils import escape

from reprokit.model.attribution import compile_rate
from reprokit.model.case import Case
from reprokit.model.corpus import CaseDir
from reprokit.model.untrusted_text import xml_text
from reprokit.model.verdict import Role, Verdict
from reprokit.publish.changed_files import write_changed
from reprokit.store.views import View


def junit_xml(res: View) -> str:
    """One testcase per record; a failure for what needs attention, a skip for what did not run. Written line by line
    with the standard library's escaping (ElementTree took most of the time of rendering 25,000 records)."""
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        f"<testsuite name={_attr(f'reprokit.{res.target}')} tests={_attr(len(res.records))} "
        f"failures={_attr(sum(r.verdict.needs_attention for r in res.records))} "
        f"skipped={_attr(sum(not r.verdict.ran for r in res.records))} "
        f"time={_attr(f'{sum(r.seconds for r in res.records):.2f}')}>",
    ]
    for rec in sorted(res.records, key=lambda r: r.key):
        why = xml_text(rec.why)  # the case controls it (its exception, its output): nothing XML cannot hold
        lines.append(
            f"  <testcase classname={_attr(rec.case)} name={_attr(f'{rec.variant}@{rec.dtype}')} "
            f"time={_attr(f'{rec.seconds:.2f}')}>"
        )
        if rec.verdict.needs_attention:
            lines.append(
                f"    <failure message={_attr(f'{rec.verdict}: {why}'[:500])} type={_attr(rec.verdict)}>"
                f"{escape(xml_text(_no_machine_paths(rec.stderr_tail[-3000:])))}</failure>"
            )
        elif not rec.verdict.ran:
            lines.append(f"    <skipped message={_attr(why[:500])} />")
        lines += [f"    <system-out>{escape(f'verdict: {rec.verdict} ({why})')}</system-out>", "  </testcase>"]
    return "\n".join([*lines, "</testsuite>", ""])


_ATTRIBUTE_ENTITIES = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#09;"}


_NEEDS_ESCAPE = re.compile(r'[&<>"\n\r\t]')


_MACHINE_PATHS = (
    (re.compile(r'/[^\s"\']*?/site-packages/'), ".../site-packages/"),
    (re.compile(r'/[^\s"\']*?/(cases/[\w-]+/)'), r"\1"),
    (re.compile(r'/[^\s"\']*?/tools/reprokit/'), "reprokit/"),
)


def _no_machine_paths(text: str) -> str:
    """A recorded tail as any machine would show it: no checkout, virtual environment or home folder of the runner."""
    for pattern, repl in _MACHINE_PATHS:
        text = pattern.sub(repl, text)
    return text


def _attr(value) -> str:
    """An XML attribute value, quoted: &, <, > and the quote escaped, and the whitespace an attribute would fold."""
    text = str(value)
    return f'"{escape(text, _ATTRIBUTE_ENTITIES) if _NEEDS_ESCAPE.search(text) else text}"'


BADGE_LABEL = "torch.compile failure rate"


def badge(res: View, cases: Mapping[str, CaseDir | Case] | None = None) -> str:
    """A shields.io endpoint: the torch.compile failure rate of the target's repros (attribution.compile_rate, the
    report's compile-only figure, never the any-reason count) on the release its report shows, named in the label.
    `cases`: case id -> its case (or case folder), whose declarations leave a failure out of the rate. Orange where a
    repro fails in the compile stack, green where none does, red where one of our fixes is broken."""
    by_id = {i: c.case if isinstance(c, CaseDir) else c for i, c in (cases or {}).items()}
    failures, ran = compile_rate(res.records, by_id)
    broken = res.counts.fixes_broken
    color = "red" if broken else ("orange" if failures else "brightgreen")
    message = (f"{failures / ran:.1%} ({failures}/{ran} repros)" if ran else "no repro ran") + (
        f", {broken} fix{'es' if broken > 1 else ''} broken" if broken else ""
    )
    return (
        json.dumps(
            {
                "schemaVersion": 1,
                "label": f"{BADGE_LABEL} ({res.target}, torch {res.release})",
                "message": message,
                "color": color,
            },
            sort_keys=True,
        )
        + "\n"
    )


def save_grid(
    grid: list[list[int]],
    rows: list[str],
    cols: list[str],
    colors: list[str],
    path: Path,
    *,
    size: tuple[float, float],
    title: str,
    col_labels: dict,
    row_fontsize: int,
    legend: list[str] | None = None,
) -> bool:
    """A categorical heatmap (cell value = index into colors) saved as a PNG without a timestamp or version; whether
    the file changed (changed_files.py)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    fig, ax = plt.subplots(figsize=size)
    ax.imshow(grid, cmap=ListedColormap(colors), vmin=0, vmax=len(colors) - 1, aspect="auto")
    ax.set_xticks(range(len(cols)), cols, **col_labels)
    ax.set_yticks(range(len(rows)), rows, fontsize=row_fontsize)
    if legend:
        ax.legend(
            handles=[Patch(color=c, label=v) for v, c in zip(legend, colors, strict=True)],
            loc="upper center",
            bbox_to_anchor=(0.5, -0.04),
            ncol=2,
            fontsize=6,
            frameon=False,
        )
    ax.set_title(title, fontsize=8)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return write_changed(path, png.getvalue())


def heatmap(all_results: dict[str, View], case_ids: list[str], path: Path) -> bool:
    """Case x target: the repro verdict of each cell (worst over dtypes)."""
    order = [
        Verdict.DOES_NOT_REPRODUCE,
        Verdict.REPRODUCES,
        Verdict.FAILS_DIFFERENTLY,
        Verdict.TIMEOUT,
        Verdict.SKIPPED,
    ]
    colors = ["#2e7d32", "#c62828", "#ef6c00", "#6a1b9a", "#bdbdbd"]
    targets = list(all_results)
    repros: dict[str, dict[str, list[Verdict]]] = {t: {} for t in targets}
    for t in targets:
        for r in all_results[t].records:
            if Role.of(r.variant) is Role.REPRO:
                repros[t].setdefault(r.case, []).append(r.verdict)
    grid = []
    for case_id in case_ids:
        row = []
        for t in targets:
            verdicts = repros[t].get(case_id, [])
            ran = [v for v in verdicts if v.ran]
            row.append(order.index(sorted(ran, key=order.index)[-1]) if ran else len(order) - 1)
        grid.append(row)
    return save_grid(
        grid,
        case_ids,
        targets,
        colors,
        path,
        size=(2.5 + 1.1 * len(targets), 1.2 + 0.22 * len(case_ids)),
        title="repro verdict per case and target",
        col_labels={"fontsize": 8},
        row_fontsize=6,
        legend=[str(v) for v in order],
    )
