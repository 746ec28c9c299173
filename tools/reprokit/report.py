"""Render Markdown reports from recorded results. Never runs torch; same results give byte-identical output."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import tabulate as _tabulate_module
from tabulate import tabulate

from . import ledger, publish, sweep_report
from .corpus import CaseDir
from .environment import summary
from .results import Record, ResultSet, cache_text, jobs_text
from .results import load as load_results
from .schema import Claims

# Markdown renderers ignore column padding, and measuring emoji display widths (wcwidth) dominated render time.
_tabulate_module.WIDE_CHARS_MODE = False

SYMBOL = {"reproduces": "🔴", "does-not-reproduce": "🟢", "fails-differently": "🟠", "timeout": "⏱",
          "skipped": "⚪", "fix-works": "✅", "fix-broken": "❌"}

def _cell(text: str | None, width: int = 90) -> str:
    text = " ".join((text or "").split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def outcome_text(rec: Record | None) -> str:
    if rec is None:
        return "—"
    text = f"{SYMBOL.get(rec.verdict, '')} {rec.verdict}"
    if rec.verdict == "skipped":
        return f"{text}: {_cell(rec.why, 60)}"
    if rec.exception and rec.verdict not in ("does-not-reproduce", "fix-works"):
        short = rec.exception.rsplit(".", 1)[-1]
        text += f": `{short}` {_cell(rec.headline(), 70)}"
    elif rec.verdict in ("fails-differently", "fix-broken", "timeout"):
        text += f": {_cell(rec.why, 70)}"
    return text


def rows_by_case(records: list[Record]) -> dict[tuple[str, str], dict[str, Record]]:
    """(case, dtype) -> variant -> record."""
    grouped: dict[tuple[str, str], dict[str, Record]] = defaultdict(dict)
    for rec in records:
        grouped[(rec.case, rec.dtype)][rec.variant] = rec
    return dict(sorted(grouped.items()))


def counts(records: list[Record]) -> Counter:
    return Counter(r.verdict for r in records)


def summary_line(records: list[Record]) -> str:
    repro = counts([r for r in records if r.variant == "repro"])
    fixes = counts([r for r in records if r.variant != "repro"])
    ran = sum(v for k, v in repro.items() if k != "skipped")
    return (f"{len(records)} runs. Repros: {ran} ran — {repro['reproduces']} reproduce, "
            f"{repro['does-not-reproduce']} do not reproduce, {repro['fails-differently']} fail differently, "
            f"{repro['timeout']} timed out; {repro['skipped']} skipped. "
            f"Fixes: {fixes['fix-works']} work, {fixes['fix-broken']} broken, {fixes['skipped']} skipped.")


def _case_row(case_id: str, dtype: str, variants: dict[str, Record], cd: CaseDir | None) -> list:
    repro = variants.get("repro")
    fix = outcome_text(variants.get("fixed")) if "fixed" in variants else "no fix yet"
    if "article_fix" in variants:
        fix += f"<br>article's fix: {outcome_text(variants['article_fix'])}"
    breaks = (repro.dynamo or {}).get("graph_breaks") if repro and repro.dynamo else None
    return [f"[`{case_id}`](../cases/{case_id}/)" + (f" `{dtype}`" if dtype != "float32" else ""),
            cd.case.category if cd else "?",
            f"§{cd.case.article.section}: {_cell(cd.case.article.claim, 80)}" if cd and cd.case.article
            else (_cell(cd.case.title, 80) if cd else ""),
            outcome_text(repro), fix, (repro.stage or "") if repro else "",
            "" if breaks is None else breaks, f"{repro.seconds:.1f}" if repro and repro.status else ""]


def confinement_line(records: list[Record]) -> str:
    ran = [r for r in records if r.status]
    confined = [r for r in ran if r.confined]
    if not confined:
        return "Writes of case code were not confined to its own folder in this run (see CONTRIBUTING.md)."
    return (f"Writes of case code were confined to its own folder (Landlock ABI {min(r.confined for r in confined)}) "
            f"in {len(confined)} of {len(ran)} runs.")


def render_target(results: ResultSet, cases: dict[str, CaseDir], description: str,
                  previous: ResultSet | None = None) -> str:
    run, env = results.run, results.environment
    lines = [f"# `{results.target}`: {description}", "",
             f"Recorded on {summary(env)}.  ",
             f"Run: {run.get('mode', 'host')} mode, {jobs_text(run)}, {cache_text(run)}"
             + (", warm interpreter" if str(run.get("interpreter", "")).startswith("warm") else "") + ", "
             f"{run.get('wall_seconds', 0):.0f} s wall"
             + (f" for the selection {', '.join(run['selection'])}" if run.get("selection") else "")
             + f", finished {run.get('finished', '?')}.  ",
             *[f"Added later: {len(a['keys'])} runs ({_cell(', '.join(sorted({k.split('/')[0] for k in a['keys']})), 200)})"
               f" on {a['on']}, {a.get('device_count')} device(s), finished {a['finished']}.  "
               for a in run.get("added", [])],
             confinement_line(results.records), "",
             summary_line(results.records), ""]
    if run.get("not_started"):
        lines[-1:] = [f"**Incomplete:** {run['not_started']} runs were not started before the run's deadline "
                      "and are missing below.", ""]
    single, multi = [], []
    for (case_id, dtype), variants in rows_by_case(results.records).items():
        cd = cases.get(case_id)
        row = _case_row(case_id, dtype, variants, cd)
        needs = cd.case.requires if cd else None
        (multi if needs and max(needs.world_size, needs.min_devices) > 1 else single).append(row)
    headers = ["case", "category", "article's claim", "repro", "fix", "stage", "graph breaks", "s"]
    lines.append(tabulate(single, headers=headers, tablefmt="github", disable_numparse=True))
    if multi:
        lines += ["", "### Multi-process and multi-GPU cases", "",
                  "Launched with torchrun, one process per rank (gloo on CPU, NCCL on GPUs; NVLink multicast off).", "",
                  tabulate(multi, headers=headers, tablefmt="github", disable_numparse=True)]
    changed = publish.changes(previous, results)
    lines += ["", "## Changes since the previous recorded run", ""]
    if previous is None:
        lines.append("No previous run is recorded.")
    else:
        lines.append(tabulate(changed, headers=["run", "before", "now"], tablefmt="github") if changed
                     else f"None (previous run finished {previous.run.get('finished', '?')}).")
    lines += ["", "Legend: " + ", ".join(f"{s} {v}" for v, s in SYMBOL.items()) + ".",
              f"Raw records: [`{results.target}/results.json`]({results.target}/results.json); "
              f"JUnit XML: [`{results.target}/junit.xml`]({results.target}/junit.xml); "
              f"badge: [`{results.target}/badge.json`]({results.target}/badge.json).", ""]
    return "\n".join(lines)


def render_ledger(claims: Claims, all_results: dict[str, ResultSet], cases: dict[str, CaseDir],
                  sweeps: dict[str, ResultSet]) -> list[str]:
    rows, tally = [], {t: Counter() for t in all_results}
    for claim in claims.claims:
        cells = []
        for target, res in all_results.items():
            verdict, detail = ledger.judge(claim, cases, res.records, sweeps.get(target))
            tally[target][verdict] += 1
            cells.append(ledger.SYMBOL[verdict] + (f": {_cell(detail, 50)}" if verdict in (
                ledger.NOT_TESTABLE, ledger.MIXED) and not claim.untestable or claim.sweep else ""))
        tested_by = ", ".join([f"[`{c}`](../cases/{c}/)" for c in claim.cases]
                              + (["the model sweep"] if claim.sweep else [])) or _cell(claim.untestable, 70)
        rows.append([f"§{claim.section}", _cell(claim.claim, 90), tested_by, *cells])
    lines = ["## Claims ledger", "",
             "Each claim of the article, the case(s) that test it and what the recorded runs say on each target. "
             "A claim of failure is confirmed when its repro reproduces; a claim that some code works is refuted "
             "when that code fails.", ""]
    lines.append(tabulate(rows, headers=["§", "claim", "tested by", *all_results], tablefmt="github"))
    lines += ["", "Per target: " + "; ".join(
        f"`{t}` " + ", ".join(f"{n} {v}" for v, n in sorted(c.items())) for t, c in tally.items()) + ".", ""]
    return lines


def render_index(all_results: dict[str, ResultSet], cases: dict[str, CaseDir], descriptions: dict[str, str],
                 claims: Claims | None = None, sweeps: dict[str, ResultSet] | None = None) -> str:
    lines = ["# Compatibility report", "",
             "Every figure below is rendered from the recorded results linked per target; nothing is edited by hand.",
             "", "## Targets", ""]
    rows = []
    for name, res in all_results.items():
        repro = counts([r for r in res.records if r.variant == "repro"])
        fixes = counts([r for r in res.records if r.variant == "fixed"])
        ran = sum(v for k, v in repro.items() if k != "skipped")
        rows.append([f"[`{name}`]({name}.md)", descriptions.get(name, ""), summary(res.environment),
                     ran, repro["reproduces"], repro["does-not-reproduce"], repro["fails-differently"],
                     repro["skipped"], f"{fixes['fix-works']}/{fixes['fix-works'] + fixes['fix-broken']}"])
    lines.append(tabulate(rows, headers=["target", "hardware", "recorded on", "repros run", "reproduce",
                                         "do not", "differently", "skipped", "fixes working"], tablefmt="github"))
    lines += ["", "## Failure rate per category", "",
              "Repros that fail as their case.yaml expects (the failure the article describes, or the article's own code "
              "failing) out of those that ran, per category and target.",
              ""]
    categories = sorted({c.case.category for c in cases.values()})
    rate_rows = []
    for category in categories:
        cells = []
        for res in all_results.values():
            ran = [r for r in res.records if r.variant == "repro" and r.verdict != "skipped"
                   and r.case in cases and cases[r.case].case.category == category]
            hit = sum(r.verdict == "reproduces" for r in ran)
            cells.append(f"{hit / len(ran):.0%} ({hit}/{len(ran)})" if ran else "—")
        rate_rows.append([category, *cells])
    totals = []
    for res in all_results.values():
        ran = [r for r in res.records if r.variant == "repro" and r.verdict != "skipped"]
        hit = sum(r.verdict == "reproduces" for r in ran)
        totals.append(f"**{hit / len(ran):.1%} ({hit}/{len(ran)})**" if ran else "—")
    rate_rows.append(["all cases (the article's 63.2% is a rate over model structures: see the sweep)", *totals])
    lines.append(tabulate(rate_rows, headers=["category", *all_results], tablefmt="github", disable_numparse=True))
    lines += ["", "## Case x target", "", "![case x target heatmap](heatmap.png)", ""]
    targets = list(all_results)
    matrix = []
    for case_id in sorted(cases):
        cells = []
        for t in targets:
            recs = [r for r in all_results[t].records if r.case == case_id and r.variant == "repro"]
            cells.append(" ".join(SYMBOL.get(r.verdict, "?") for r in sorted(recs, key=lambda r: r.dtype)) or "—")
        matrix.append([f"[`{case_id}`](../cases/{case_id}/)", cases[case_id].case.category, *cells])
    lines.append(tabulate(matrix, headers=["case", "category", *[f"[{t}]({t}.md)" for t in targets]],
                          tablefmt="github"))
    lines += ["", "Legend: " + ", ".join(f"{s} {v}" for v, s in SYMBOL.items()) + ".", ""]
    if claims is not None:
        lines += render_ledger(claims, all_results, cases, sweeps or {})
    lines += sweep_report.index_section(sweeps or {})
    return "\n".join(lines)


def write_reports(out: Path, all_results: dict[str, ResultSet], cases: list[CaseDir],
                  descriptions: dict[str, str], claims: Claims | None = None,
                  sweeps: dict[str, ResultSet] | None = None) -> list[Path]:
    by_id = {c.case.id: c for c in cases}
    written = []
    for name, res in all_results.items():
        prev_path = out / name / "results.previous.json"
        previous = load_results(prev_path) if prev_path.exists() else None
        path = out / f"{name}.md"
        path.write_text(render_target(res, by_id, descriptions.get(name, ""), previous), encoding="utf-8")
        (out / name / "junit.xml").write_text(publish.junit_xml(res), encoding="utf-8")
        (out / name / "badge.json").write_text(publish.badge(res), encoding="utf-8")
        written += [path, out / name / "junit.xml", out / name / "badge.json"]
    if all_results:
        publish.heatmap(all_results, sorted(by_id), out / "heatmap.png")
        written.append(out / "heatmap.png")
    index = out / "README.md"
    index.write_text(render_index(all_results, by_id, descriptions, claims, sweeps), encoding="utf-8")
    written.append(index)
    return written
