"""reports/README.md: the targets, the failure rate per category, the ledger, the sweep and the upstream issues."""

from __future__ import annotations

from collections import defaultdict

from reprokit.model.attribution import COMPILE_STAGES, compile_rate, outside_compile
from reprokit.model.claims import Claims
from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record
from reprokit.model.verdict import Role, Verdict, rate_text, reproduce_rate
from reprokit.publish import issue_status
from reprokit.publish.glossary import BY_MACHINE
from reprokit.publish.markdown import table
from reprokit.publish.pages import sweep_report
from reprokit.publish.pages.ledger_page import render_ledger
from reprokit.publish.pages.run_facts import machine_text
from reprokit.store.last_runs import LastRun
from reprokit.store.views import View


def targets_table(views: dict[str, View], descriptions: dict[str, str]) -> str:
    rows = []
    for name, view in views.items():
        t = view.counts
        torch = view.release + (f" (**not the pin {view.pin}**)" if view.off_pin else "")
        rows.append(
            [
                f"[`{name}`]({name}.md)",
                descriptions.get(name, ""),
                machine_text(view.environment),
                torch,
                t.repros_run,
                t.reproduce,
                t.do_not_reproduce,
                t.fail_differently,
                t.repros_skipped,
                t.fixes_text(),
                t.article_fixes_text(),
            ]
        )
    return table(
        rows,
        [
            "target",
            "hardware",
            "recorded on",
            "torch shown",
            "repros run",
            "reproduce",
            "do not",
            "differently",
            "skipped",
            "our fixes",
            "the article's fixes",
        ],
    )


def render_index(
    views: dict[str, View],
    cases: dict[str, CaseDir],
    descriptions: dict[str, str],
    claims: Claims | None = None,
    sweeps: dict[str, View] | None = None,
    histories: dict[str, dict[str, list[Record]]] | None = None,
    last_runs: dict[str, dict[str, LastRun]] | None = None,
) -> str:
    lines = [
        "# Compatibility report",
        "",
        "Every figure below is rendered from the recorded results linked per target; nothing is edited by hand. "
        "Each target column shows one torch release: its pin in matrix.yaml when recorded, else the newest "
        "recorded (then flagged).",
        "",
        "## Targets",
        "",
        targets_table(views, descriptions),
    ]
    lines += [
        "",
        "## Failure rate per category",
        "",
        "Repros that fail as their case.yaml expects (the failure the article describes, or the article's own code "
        "failing) out of those that ran, per category and target.",
        "",
    ]
    categories = sorted({c.case.category for c in cases.values()})
    by_category: dict[str, defaultdict[str, list[Record]]] = {name: defaultdict(list) for name in views}
    for name, view in views.items():
        for r in view.records:
            if r.case in cases:
                by_category[name][cases[r.case].case.category].append(r)
    rate_rows = [
        [category, *[rate_text(*reproduce_rate(by_category[name][category]), digits=0) for name in views]]
        for category in categories
    ]
    rate_rows.append(
        [
            "all cases, failing for any reason (the article's recipes as written)",
            *[f"**{rate_text(*view.rate)}**" if view.records else "—" for view in views.values()],
        ]
    )
    by_id = {i: c.case for i, c in cases.items()}
    rate_rows.append(
        [
            "all cases, torch.compile failures only (compile stack; documented behaviour, invalid usage, "
            "missing packages, the article's own code, correct behaviour and feature requests left out)",
            *[
                f"**{rate_text(*compile_rate(view.records, by_id))}**" if view.records else "—"
                for view in views.values()
            ],
        ]
    )
    lines.append(table(rate_rows, ["category", *views]))
    lines += [
        "",
        "The two bottom rows never mix: the article's 63.2% is a torch.compile failure rate over model "
        "structures (see the model sweep below); set it beside the compile-only row. A failure counts as "
        "torch.compile's when its repro failed as claimed in dynamo, aot_autograd, inductor or export (the "
        "traceback's stage, or the ablation ladder's) and its case.yaml declares no `documented:` or "
        "`outside_compile:`; both rows count the repros that ran (flaky and machine-dependent ones aside).",
    ]
    lines += left_out(views, by_id)
    lines += ["", "## Case x target", "", "![case x target heatmap](heatmap.png)", ""]
    matrix = []
    repros: dict[str, defaultdict[str, list[Record]]] = {name: defaultdict(list) for name in views}
    for name, view in views.items():
        for r in view.records:
            if Role.of(r.variant) is Role.REPRO:
                repros[name][r.case].append(r)
    for case_id in sorted(cases):
        cells = []
        for name in views:
            recs = repros[name][case_id]
            cells.append(
                " ".join(
                    (f"{r.verdict.symbol} `{r.dtype}`" if len(recs) > 1 else r.verdict.symbol)
                    + (f" {BY_MACHINE}" if r.machine_dependent else "")
                    for r in sorted(recs, key=lambda r: r.dtype)
                )
                or "—"
            )
        matrix.append([f"[`{case_id}`](../cases/{case_id}/)", cases[case_id].case.category, *cells])
    lines.append(table(matrix, ["case", "category", *[f"[{t}]({t}.md)" for t in views]]))
    lines += [
        "",
        "Legend: " + ", ".join(f"{v.symbol} {v}" for v in Verdict) + f"; {BY_MACHINE}: another machine gave "
        "the same torch and case content another verdict (the target's report names each).",
        "",
    ]
    lines += issue_status.index_section(list(cases.values()), histories or {})
    if claims is not None:
        lines += render_ledger(claims, views, cases, sweeps or {}, histories, last_runs)
    lines += sweep_report.index_section(sweeps or {})
    return "\n".join(lines)


def left_out(views: dict[str, View], cases: dict) -> list[str]:
    """The repros that failed as claimed in the compile stack but are left out of the compile-only row, each with its
    case's reason (model/attribution.py): the row's exclusions, listed."""
    found: dict[str, tuple[str, list[str]]] = {}
    for name, view in views.items():
        for r in view.records:
            why = outside_compile(cases.get(r.case))
            if (
                why
                and Role.of(r.variant) is Role.REPRO
                and r.verdict is Verdict.REPRODUCES
                and r.stage in COMPILE_STAGES
                and not r.machine_dependent
            ):
                found.setdefault(r.case, (why, []))[1].append(name)
    if not found:
        return []
    return [
        "",
        "Failing as claimed in the compile stack, left out of the compile-only row:",
        "",
        *[f"- `{case}` ({', '.join(dict.fromkeys(targets))}): {why}" for case, (why, targets) in sorted(found.items())],
    ]
