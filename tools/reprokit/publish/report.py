"""Render Markdown reports from recorded results. Never runs torch; same results give byte-identical output."""

from __future__ import annotations

import functools
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

from reprokit.model import corpus
from reprokit.model.claims import Claims
from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record
from reprokit.model.untrusted_text import identifier, md_cell
from reprokit.model.verdict import Role, Tally, Verdict, rate_text, reproduce_rate
from reprokit.publish import ci_artifacts, issue_status, ledger, sweep_report
from reprokit.publish.markdown import table
from reprokit.publish.run_facts import cache_text, finished_text, jobs_text, machine_text
from reprokit.store.views import View


def _cell(text: str | None, width: int = 90) -> str:
    return md_cell(text, width)


@functools.lru_cache(maxsize=4096)
def _wrapped(text: str | None, width: int = 60) -> str:
    """A cell's whole text in lines of about `width` characters: a claim is wrapped, never cut. Cached: a case's
    claim is the same cell in every row of the case (each dtype, each release)."""
    return "<br>".join(textwrap.wrap(_cell(text, width=10**9), width, break_long_words=False,
                                     break_on_hyphens=False))


def outcome_text(rec: Record | None, dtype: bool = False) -> str:
    """A verdict cell: symbol and word (with the run's dtype when `dtype`), then what went wrong."""
    if rec is None:
        return "—"
    text = f"{rec.verdict.symbol} {rec.verdict}" + (f" `{rec.dtype}`" if dtype else "")
    if not rec.verdict.ran:
        return f"{text}: {_cell(rec.why, 60)}"
    if rec.exception and rec.verdict not in (Verdict.DOES_NOT_REPRODUCE, Verdict.FIX_WORKS):
        short = identifier(rec.exception).rsplit(".", 1)[-1]
        text += f": `{short}` {_cell(rec.headline(), 70)}"
    elif rec.verdict.needs_attention:
        text += f": {_cell(rec.why, 70)}"
    return text


def rows_by_case(records: list[Record]) -> dict[tuple[str, str], dict[str, Record]]:
    """(case, dtype) -> variant -> record."""
    grouped: dict[tuple[str, str], dict[str, Record]] = defaultdict(dict)
    for rec in records:
        grouped[(rec.case, rec.dtype)][rec.variant] = rec
    return dict(sorted(grouped.items()))


def summary_line(t: Tally) -> str:
    return (f"{t.runs} runs. Repros: {t.repros_run} ran — {t.reproduce} reproduce, "
            f"{t.do_not_reproduce} do not reproduce, {t.fail_differently} fail differently, "
            f"{t.timeout} timed out; {t.repros_skipped} skipped. "
            f"Our fixes: {t.fixes_text()} ({t.fixes_broken} broken, {t.fixes_skipped} skipped). "
            f"The article's own fixes: {t.article_fixes_text()}.")


def run_lines(view: View) -> list[str]:
    """Which runs the view shows, how each ran, and where: one line per run."""
    shown = {r.run_id: 0 for r in view.records}
    for r in view.records:
        shown[r.run_id] += 1
    lines = []
    for n, head in enumerate(view.runs):
        what = "Run" if n == 0 else "Added later"
        where = f" on {head.sittings[-1].on}" if n and head.sittings and head.sittings[-1].on else ""
        lines.append(
            f"{what}: {head.mode} mode, {jobs_text(head)}, {cache_text(head)}"
            + (", warm interpreter" if head.interpreter.startswith("warm") else "")
            + f", {head.wall_seconds:.0f} s wall"
            + (f" for the selection {_cell(', '.join(head.selection), 200)}" if head.selection else "")
            + f"{where}, torch {head.torch}, finished {finished_text(head)}; {shown.get(head.run_id, 0)} records "
            f"shown.  ")
    return lines


def _case_row(case_id: str, dtype: str, variants: dict[str, Record], cd: CaseDir | None,
              since: dict[str, str] | None = None) -> list:
    repro = variants.get("repro")
    fix = outcome_text(variants.get("fixed"), dtype=True) if "fixed" in variants else "no fix yet"
    if "article_fix" in variants:
        fix += f"<br>article's fix: {outcome_text(variants['article_fix'], dtype=True)}"
    breaks = (repro.dynamo or {}).get("graph_breaks") if repro and repro.dynamo else None
    return [f"[`{case_id}`](../cases/{case_id}/)" + (f" `{dtype}`" if dtype != "float32" else ""),
            cd.case.category if cd else "?",
            _wrapped(f"§{cd.case.article.section}: {cd.case.article.claim}") if cd and cd.case.article
            else (_wrapped(cd.case.title) if cd else ""),
            outcome_text(repro, dtype=True), (since or {}).get(f"{case_id}/repro@{dtype}", ""), fix,
            (repro.stage or "") if repro else "",
            "" if breaks is None else breaks, f"{repro.seconds:.1f}" if repro and repro.status else ""]


def recorded_before_change(records: list[Record], cases: dict[str, CaseDir]) -> tuple[set, set]:
    """(case, dtype) rows with a record whose case content (its hash when it ran) is not the case folder's now, and
    rows with a record that has no hash (recorded before hashes were kept: whether the case changed is unknown)."""
    now: dict[str, str] = {}
    changed, unknown = set(), set()
    for rec in records:
        cd = cases.get(rec.case)
        if cd is None:
            continue
        if rec.case_hash is None:
            unknown.add((rec.case, rec.dtype))
            continue
        if rec.case not in now:
            now[rec.case] = corpus.content_hash(cd.path)
        if rec.case_hash != now[rec.case]:
            changed.add((rec.case, rec.dtype))
    return changed, unknown - changed


def unrecorded(records: list[Record], cases: dict[str, CaseDir]) -> int:
    """How many runs of the corpus (case x variant x dtype) have no record among `records`."""
    recorded = {r.key for r in records}
    return sum(f"{cid}/{variant}@{dtype}" not in recorded for cid, cd in cases.items()
               for variant in cd.variants() for dtype in cd.case.requires.dtypes)


def confinement_line(records: list[Record]) -> str:
    ran = [r for r in records if r.status]
    confined = [r for r in ran if r.confined]
    if not confined:
        line = "Writes of case code were not confined to its own folder in this run (see CONTRIBUTING.md)."
    else:
        line = (f"Writes of case code were confined to its own folder (Landlock ABI "
                f"{min(r.confined for r in confined)}) in {len(confined)} of {len(ran)} runs.")
    held = Counter(r.contained for r in ran if r.contained)
    if held:  # recorded since contain.py: what kept the run's processes in, e.g. a PID namespace and another user
        line += " Processes were contained by " + "; ".join(
            f"{what} ({count} of {len(ran)} runs)" for what, count in held.most_common()) + "."
    return line


def render_target(view: View, cases: dict[str, CaseDir], description: str,
                  changes: list[tuple[str, str, str, Verdict, Verdict]] = (), since: dict[str, str] | None = None) -> str:
    lines = [f"# `{view.target}`: {description}", "",
             f"Recorded on {machine_text(view.environment)}.  ",
             *([f"**Not the pinned torch:** matrix.yaml pins {view.pin}; the newest release recorded here is "
                f"{view.release}.  "] if view.off_pin else []),
             *([f"Torch builds shown: {', '.join(view.builds)} (the newest record of each run wins).  "]
               if len(view.builds) > 1 else []),
             *run_lines(view),
             confinement_line(view.records), "",
             summary_line(view.counts), ""]
    missing = unrecorded(view.records, cases) if any(h.not_started for h in view.runs) else 0
    if missing:  # a run was cut short, and what it left is still unrecorded (a later run may have filled it in)
        lines[-1:] = [f"**Incomplete:** {missing} runs of the corpus were not started before a run's deadline "
                      "(or its interrupt) and are missing below.", ""]
    single, multi = [], []
    earlier, unknown = recorded_before_change(view.records, cases)
    if earlier:
        lines[-1:] = [lines[-1], "", f"† {len(earlier)} rows were recorded with an earlier version of their case (its "
                      "files changed since): their verdicts are of that version until a run records this one.", ""]
    if unknown:
        lines[-1:] = [lines[-1], "", f"‡ {len(unknown)} rows were recorded before records kept their case's content "
                      "hash: the case may have changed since.", ""]
    for (case_id, dtype), variants in rows_by_case(view.records).items():
        cd = cases.get(case_id)
        row = _case_row(case_id, dtype, variants, cd, since)
        if (case_id, dtype) in earlier:
            row[0] += " †"
        elif (case_id, dtype) in unknown:
            row[0] += " ‡"
        needs = cd.case.requires if cd else None
        (multi if needs and max(needs.world_size, needs.min_devices) > 1 else single).append(row)
    headers = ["case", "category", "article's claim", "repro", "since / fixed in", "fix", "stage", "graph breaks", "s"]
    lines.append(table(single, headers))
    if multi:
        lines += ["", "### Multi-process and multi-GPU cases", "",
                  "Launched with torchrun, one process per rank (gloo on CPU, NCCL on GPUs; NVLink multicast off).", "",
                  table(multi, headers)]
    lines += ["", "## Changes between torch releases", ""]
    if len(view.history) < 2:
        lines.append(f"Only torch {view.release} is recorded for this target.")
    else:
        lines.append(f"Releases recorded: {', '.join(view.history)} (every verdict per release: "
                     f"[`{view.target}-history.md`]({view.target}-history.md)).")
        lines += ["", table([[k, f"{a} → {b}", str(x), str(y)] for k, a, b, x, y in changes],
                            ["run", "releases", "before", "after"])
                  if changes else "No verdict changes between consecutive releases."]
    lines += ["", "Legend: " + ", ".join(f"{v.symbol} {v}" for v in Verdict) + ".",
              f"Raw records: [`results/{view.target}/`](../results/{view.target}/) (one JSON line per record); "
              f"JUnit XML: [`{view.target}/junit.xml`]({view.target}/junit.xml); "
              f"badge: [`{view.target}/badge.json`]({view.target}/badge.json).", ""]
    return "\n".join(lines)


def holds_since(claim, cases: dict[str, CaseDir], every: dict[str, list[Record]], target: str,
                verdict: str) -> str:
    """' (holds 2.8.0 – 2.15.0)' or ' (since 2.11.0; before: refuted)': the releases over which the claim's current
    verdict holds, judged on each recorded release's records (the sweep is one release only, so not used here)."""
    if len(every) < 2 or verdict in (ledger.NOT_TESTABLE, ledger.NOT_RUN) or claim.sweep:
        return ""
    judged = [(rel, ledger.judge(claim, cases, recs, None, target=target)[0]) for rel, recs in every.items()]
    judged = [(rel, v) for rel, v in judged if v != ledger.NOT_RUN]
    if len(judged) < 2 or judged[-1][1] != verdict:
        return ""
    start = len(judged) - 1
    while start > 0 and judged[start - 1][1] == verdict:
        start -= 1
    if start == 0:
        return f" (holds {judged[0][0]} – {judged[-1][0]})"
    return f" (since {judged[start][0]}; {judged[start - 1][0]}: {judged[start - 1][1]})"


def render_ledger(claims: Claims, views: dict[str, View], cases: dict[str, CaseDir],
                  sweeps: dict[str, View], histories: dict[str, dict[str, list[Record]]] | None = None) -> list[str]:
    rows, per_target = [], {t: Counter() for t in views}
    for claim in claims.claims:
        cells = []
        for target, view in views.items():
            verdict, detail = ledger.judge(claim, cases, view.records, sweeps.get(target), target=target)
            per_target[target][verdict] += 1
            cells.append(ledger.SYMBOL[verdict] + (f": {_cell(detail, 50)}" if verdict in (
                ledger.NOT_TESTABLE, ledger.MIXED, ledger.PARTLY_TESTED) and not claim.untestable or claim.sweep
                else "") + holds_since(claim, cases, (histories or {}).get(target, {}), target, verdict))
        tested_by = ", ".join([f"[`{c}`](../cases/{c}/)" for c in claim.cases]
                              + (["the model sweep"] if claim.sweep else [])) or _cell(claim.untestable, 70)
        rows.append([f"§{claim.section}", _wrapped(claim.claim), tested_by, *cells])
    lines = ["## Claims ledger", "",
             "Each claim of the article, the case(s) that test it and what the recorded runs say on each target. "
             "A claim of failure is confirmed when its repro reproduces; a claim that some code works is refuted "
             "when that code fails.", ""]
    lines.append(table(rows, ["§", "claim", "tested by", *views]))
    lines += ["", "Per target: " + "; ".join(
        f"`{t}` " + ", ".join(f"{n} {v}" for v, n in sorted(c.items())) for t, c in per_target.items()) + ".", ""]
    return lines


def targets_table(views: dict[str, View], descriptions: dict[str, str]) -> str:
    rows = []
    for name, view in views.items():
        t = view.counts
        torch = view.release + (f" (**not the pin {view.pin}**)" if view.off_pin else "")
        rows.append([f"[`{name}`]({name}.md)", descriptions.get(name, ""), machine_text(view.environment), torch,
                     t.repros_run, t.reproduce, t.do_not_reproduce, t.fail_differently, t.repros_skipped,
                     t.fixes_text(), t.article_fixes_text()])
    return table(rows, ["target", "hardware", "recorded on", "torch shown", "repros run", "reproduce", "do not",
                        "differently", "skipped", "our fixes", "the article's fixes"])


def render_index(views: dict[str, View], cases: dict[str, CaseDir], descriptions: dict[str, str],
                 claims: Claims | None = None, sweeps: dict[str, View] | None = None,
                 histories: dict[str, dict[str, list[Record]]] | None = None) -> str:
    lines = ["# Compatibility report", "",
             "Every figure below is rendered from the recorded results linked per target; nothing is edited by hand. "
             "Each target column shows one torch release: its pin in matrix.yaml when recorded, else the newest "
             "recorded (then flagged).", "", "## Targets", "", targets_table(views, descriptions)]
    lines += ["", "## Failure rate per category", "",
              "Repros that fail as their case.yaml expects (the failure the article describes, or the article's own code "
              "failing) out of those that ran, per category and target.",
              ""]
    categories = sorted({c.case.category for c in cases.values()})
    by_category = {name: defaultdict(list) for name in views}
    for name, view in views.items():
        for r in view.records:
            if r.case in cases:
                by_category[name][cases[r.case].case.category].append(r)
    rate_rows = [[category, *[rate_text(*reproduce_rate(by_category[name][category]), digits=0) for name in views]]
                 for category in categories]
    rate_rows.append(["all cases (the article's 63.2% is a rate over model structures: see the sweep)",
                      *[f"**{rate_text(*view.rate)}**" if view.records else "—"
                        for view in views.values()]])
    lines.append(table(rate_rows, ["category", *views]))
    lines += ["", "## Case x target", "", "![case x target heatmap](heatmap.png)", ""]
    matrix = []
    repros = {name: defaultdict(list) for name in views}
    for name, view in views.items():
        for r in view.records:
            if Role.of(r.variant) is Role.REPRO:
                repros[name][r.case].append(r)
    for case_id in sorted(cases):
        cells = []
        for name in views:
            recs = repros[name][case_id]
            cells.append(" ".join(f"{r.verdict.symbol} `{r.dtype}`" if len(recs) > 1 else r.verdict.symbol
                                  for r in sorted(recs, key=lambda r: r.dtype)) or "—")
        matrix.append([f"[`{case_id}`](../cases/{case_id}/)", cases[case_id].case.category, *cells])
    lines.append(table(matrix, ["case", "category", *[f"[{t}]({t}.md)" for t in views]]))
    lines += ["", "Legend: " + ", ".join(f"{v.symbol} {v}" for v in Verdict) + ".", ""]
    lines += issue_status.index_section(list(cases.values()), histories or {})
    if claims is not None:
        lines += render_ledger(claims, views, cases, sweeps or {}, histories)
    lines += sweep_report.index_section(sweeps or {})
    return "\n".join(lines)


HISTORY_MARK = {Verdict.REPRODUCES: "✖ reproduces", Verdict.DOES_NOT_REPRODUCE: "○ does not",
                Verdict.FAILS_DIFFERENTLY: "△ differently", Verdict.TIMEOUT: "⧗ timeout", Verdict.SKIPPED: "· skipped",
                Verdict.FIX_WORKS: "✓ works", Verdict.FIX_BROKEN: "✗ broken"}


def _history_cell(rec: Record | None, now: dict[str, str]) -> str:
    """A history cell: the verdict's mark, with † when the record was made with another version of its case (its
    content hash differs from the folder's now) and ‡ when the record kept no hash (recorded before hashes were)."""
    if rec is None:
        return ""
    if rec.case_hash is None:
        return HISTORY_MARK[rec.verdict] + " ‡"
    if rec.case in now and rec.case_hash != now[rec.case]:
        return HISTORY_MARK[rec.verdict] + " †"
    return HISTORY_MARK[rec.verdict]


def render_history(target: str, description: str, every: dict[str, list[Record]], pin: str | None,
                   now: dict[str, str] | None = None) -> str:
    """Case x torch release: each recorded verdict, marked by shape as well as word (readable without colour).
    `now` maps case id -> the content hash of its folder today: cells recorded with another version are marked, and
    records of cases no longer in the corpus are left out (the store keeps them)."""
    releases = list(every)
    cells: dict[str, dict[str, Record]] = defaultdict(dict)
    for release, records in every.items():
        for rec in records:
            if now is None or rec.case in now:
                cells[rec.key][release] = rec
    now = now or {}
    rows = [[f"[`{key.split('/')[0]}`](../cases/{key.split('/')[0]}/) {key.split('/', 1)[1]}",
             *[_history_cell(cells[key].get(rel), now) for rel in releases]]
            for key in sorted(cells)]
    builds = {rel: sorted({r.torch for r in recs}) for rel, recs in every.items()}
    return "\n".join([
        f"# `{target}` across torch releases: {description}", "",
        f"Every recorded verdict per torch release (the pin in matrix.yaml is {pin}). Builds: "
        + "; ".join(f"{rel}: {', '.join(b)}" for rel, b in builds.items()) + ". An empty cell was not recorded.", "",
        "Marks: " + ", ".join(HISTORY_MARK.values()) + ". † recorded with an earlier version of the case (its files "
        "changed since: the verdict is that version's); ‡ recorded before records kept their case's content hash.", "",
        table(rows, ["case variant@dtype", *releases]), ""])


def write_reports(out: Path, views: dict[str, View], cases: list[CaseDir], descriptions: dict[str, str],
                  claims: Claims | None = None, sweeps: dict[str, View] | None = None,
                  changes: dict[str, list] | None = None, since: dict[str, dict[str, str]] | None = None,
                  histories: dict[str, dict[str, list[Record]]] | None = None) -> list[Path]:
    by_id = {c.case.id: c for c in cases}
    now = functools.cache(lambda: {c: corpus.content_hash(cd.path) for c, cd in by_id.items()})  # once, if asked
    written = []
    out.mkdir(parents=True, exist_ok=True)
    for name, view in views.items():
        (out / name).mkdir(exist_ok=True)
        path = out / f"{name}.md"
        path.write_text(render_target(view, by_id, descriptions.get(name, ""), (changes or {}).get(name, []),
                                      (since or {}).get(name)), encoding="utf-8")
        if histories and len(histories.get(name, {})) > 1:
            history = out / f"{name}-history.md"
            history.write_text(render_history(name, descriptions.get(name, ""), histories[name], view.pin, now()),
                               encoding="utf-8")
            written.append(history)
        (out / name / "junit.xml").write_text(ci_artifacts.junit_xml(view), encoding="utf-8")
        (out / name / "badge.json").write_text(ci_artifacts.badge(view), encoding="utf-8")
        written += [path, out / name / "junit.xml", out / name / "badge.json"]
    if views:
        ci_artifacts.heatmap(views, sorted(by_id), out / "heatmap.png")
        written.append(out / "heatmap.png")
    issues_page = issue_status.render(cases, histories or {})
    if issues_page is not None:
        (out / "upstream-issues.md").write_text(issues_page, encoding="utf-8")
        written.append(out / "upstream-issues.md")
    index = out / "README.md"
    index.write_text(render_index(views, by_id, descriptions, claims, sweeps, histories), encoding="utf-8")
    written.append(index)
    return written
