"""The site's summaries of the recorded figures, the same the Markdown reports print: the targets and their rates
(index.html), the failure rate per category, the claims ledger (ledger.html), the model sweep (sweeps.html)."""

from __future__ import annotations

from collections import defaultdict

from reprokit.model.attribution import compile_rate
from reprokit.model.records import Record
from reprokit.model.verdict import rate_text, reproduce_rate
from reprokit.publish.pages import ledger, sweep_report
from reprokit.publish.pages.run_facts import finished_text, jobs_text, machine_text
from reprokit.publish.render import Published
from reprokit.publish.site.grid import grid_file

LEDGER_CLASS = {v: v.replace(" ", "-") for v in ledger.SYMBOL}  # a ledger verdict's CSS class


def target_rows(p: Published) -> list[dict]:
    """The index's targets table: what each target shows and its figures (the Markdown index's)."""
    out = []
    for name, view in p.views.items():
        out.append(
            {
                "name": name,
                "hardware": p.descriptions.get(name, ""),
                "on": machine_text(view.environment),
                "grid": grid_file(name),
                "release": view.release,
                "pin": view.pin,
                "off_pin": view.off_pin,
                "builds": view.builds,
                "history": view.history,
                "tally": view.counts,
                "rate": rate_text(*view.rate),
                "finished": finished_text(view.header) if view.header else "",
                "history_only": len(p.last_runs.get(name, {})),
            }
        )
    return out


def unrecorded_targets(p: Published) -> list[dict]:
    """The targets of matrix.yaml that no run has recorded: each has its place on the site, marked so, with how to
    contribute a run."""
    return [
        {"name": name, "hardware": hardware, "grid": grid_file(name)}
        for name, hardware in p.descriptions.items()
        if name not in p.views
    ]


def headline_figures(p: Published) -> list[dict]:
    """Per target, the index's sentence: the torch.compile failure rate beside the article's 63.2%, the any-reason
    rate (both on the release the target shows, as reports/README.md computes them) and the model sweep's figures with
    the release the sweep ran on."""
    by_id = {c.case.id: c.case for c in p.cases}
    out = []
    for name, view in p.views.items():
        sweep = p.sweeps.get(name)
        measured = {row[0]: row[1] for row in sweep_report.summary_rows(sweep)} if sweep else {}
        out.append(
            {
                "target": name,
                "release": view.release,
                "article": f"{sweep_report.ARTICLE_FAILURE_RATE:.1%}",
                "compile": rate_text(*compile_rate(view.records, by_id)),
                "any": rate_text(*view.rate),
                "sweep_release": sweep.release if sweep else "",
                "sweep_structures": measured.get("structures failing at least one cell", ""),
                "sweep_cells": measured.get("cells failing (error or inaccurate)", ""),
            }
        )
    return out


def category_rates(p: Published) -> list[tuple[str, list[str]]]:
    """Per category and target, repros failing as claimed out of those run (report.render_index's figures)."""
    cases = {c.case.id: c for c in p.cases}
    by_category: dict[str, defaultdict[str, list[Record]]] = {name: defaultdict(list) for name in p.views}
    for name, view in p.views.items():
        for r in view.records:
            if r.case in cases:
                by_category[name][cases[r.case].case.category].append(r)
    return [
        (category, [rate_text(*reproduce_rate(by_category[name][category]), digits=0) for name in p.views])
        for category in sorted({c.case.category for c in p.cases})
    ]


def ledger_rows(p: Published) -> tuple[list[dict], dict[str, dict[str, int]]]:
    """Each claim's verdict per target (ledger.judge) and the per-target totals of ledger.html."""
    cases = {c.case.id: c for c in p.cases}
    out: list[dict] = []
    totals: dict[str, defaultdict[str, int]] = {t: defaultdict(int) for t in p.views}
    for claim in p.claims.claims if p.claims else []:
        cells = []
        for target, view in p.views.items():
            verdict, detail = ledger.judge(claim, cases, view.records, p.sweeps.get(target), target=target)
            detail = ledger.with_history(verdict, detail, claim, p.last_runs.get(target))
            totals[target][verdict] += 1
            cells.append(
                {
                    "target": target,
                    "verdict": verdict,
                    "label": ledger.SYMBOL[verdict],
                    "css": LEDGER_CLASS[verdict],
                    "detail": detail,
                }
            )
        out.append({"claim": claim, "cells": cells})
    return out, {t: dict(sorted(c.items())) for t, c in totals.items()}


def sweep_sections(p: Published) -> list[dict]:
    """sweeps.html: per target, the sweep's summary against the article and the failure rate per configuration."""
    out = []
    for name, res in p.sweeps.items():
        by_column = defaultdict(list)
        for r in res.records:
            by_column[sweep_report.column(r)].append(r)
        out.append(
            {
                "name": name,
                "hardware": p.descriptions.get(name, ""),
                "on": machine_text(res.environment),
                "release": res.release,
                "run": res.header,
                "jobs": jobs_text(res.header) if res.header else "",
                "finished": finished_text(res.header) if res.header else "",
                "cells": len(res.records),
                # the whole sweep's: every run whose records are shown (sweep_report's wall), not the last sitting
                "runs": [
                    {
                        "jobs": jobs_text(h),
                        "wall": h.wall_seconds,
                        "cells": sum(r.run_id == h.run_id for r in res.records),
                        "finished": finished_text(h),
                    }
                    for h in res.runs
                ],
                "wall": sum(h.wall_seconds for h in res.runs),
                "summary": sweep_report.summary_rows(res),
                "columns": [(c, sweep_report.rate(rs)) for c, rs in sorted(by_column.items())],
                "failing": sum(r.verdict.compile_failure for r in res.records),
            }
        )
    return out


def case_claims(p: Published) -> dict[str, list]:
    """Case id -> the claims it tests."""
    found = defaultdict(list)
    for claim in p.claims.claims if p.claims else []:
        for case_id in claim.cases:
            found[case_id].append(claim)
    return found
