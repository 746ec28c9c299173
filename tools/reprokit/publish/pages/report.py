"""Render Markdown reports from recorded results. Never runs torch; same results give byte-identical output."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from reprokit.model import case_identity
from reprokit.model.claims import Claims
from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record
from reprokit.model.verdict import Verdict
from reprokit.publish import issue_status
from reprokit.publish.changed_files import write_changed
from reprokit.publish.markdown import table
from reprokit.publish.pages import ci_artifacts
from reprokit.publish.pages.cells import outcome_text, rows_by_case, summary_line, wrapped
from reprokit.publish.pages.history_page import render_history
from reprokit.publish.pages.index_page import render_index
from reprokit.publish.pages.run_facts import machine_text, run_lines
from reprokit.store.last_runs import LastRun
from reprokit.store.views import View


def _case_row(
    case_id: str, dtype: str, variants: dict[str, Record], cd: CaseDir | None, since: dict[str, str] | None = None
) -> list:
    repro = variants.get("repro")
    fix = outcome_text(variants.get("fixed"), dtype=True) if "fixed" in variants else "no fix yet"
    if "article_fix" in variants:
        fix += f"<br>article's fix: {outcome_text(variants['article_fix'], dtype=True)}"
    breaks = (repro.dynamo or {}).get("graph_breaks") if repro and repro.dynamo else None
    return [
        f"[`{case_id}`](../cases/{case_id}/)" + (f" `{dtype}`" if dtype != "float32" else ""),
        cd.case.category if cd else "?",
        wrapped(f"§{cd.case.article.section}: {cd.case.article.claim}")
        if cd and cd.case.article
        else (wrapped(cd.case.title) if cd else ""),
        outcome_text(repro, dtype=True),
        (since or {}).get(f"{case_id}/repro@{dtype}", ""),
        fix,
        (repro.stage or "") if repro else "",
        "" if breaks is None else breaks,
        f"{repro.seconds:.1f}" if repro and repro.status else "",
    ]


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
            now[rec.case] = case_identity.content_hash(cd.path)
        if rec.case_hash != now[rec.case]:
            changed.add((rec.case, rec.dtype))
    return changed, unknown - changed


def unrecorded(records: list[Record], cases: dict[str, CaseDir]) -> int:
    """How many runs of the corpus (case x variant x dtype) have no record among `records`."""
    recorded = {r.key for r in records}
    return sum(
        f"{cid}/{variant}@{dtype}" not in recorded
        for cid, cd in cases.items()
        for variant in cd.variants()
        for dtype in cd.case.requires.dtypes
    )


def confinement_line(records: list[Record]) -> str:
    ran = [r for r in records if r.status]
    confined = [r.confined for r in ran if r.confined]  # the Landlock ABI of each confined run
    if not confined:
        line = "Writes of case code were not confined to its own folder in this run (see CONTRIBUTING.md)."
    else:
        line = (
            f"Writes of case code were confined to its own folder (Landlock ABI "
            f"{min(confined)}) in {len(confined)} of {len(ran)} runs."
        )
    held = Counter(r.contained for r in ran if r.contained)
    if held:  # recorded since contain.py: what kept the run's processes in, e.g. a PID namespace and another user
        line += (
            " Processes were contained by "
            + "; ".join(f"{what} ({count} of {len(ran)} runs)" for what, count in held.most_common())
            + "."
        )
    return line


def split_lines(view: View, splits: dict[tuple[str, str], list[Record]]) -> list[str]:
    """Where builds of the view's release disagree on a case's current content: each build's verdict, named."""
    mine = [(key, recs) for (release, key), recs in splits.items() if release == view.release]
    if not mine:
        return []
    return [
        "",
        f"Builds of {view.release} that disagree on a case as it is now (the table shows the newest; both are "
        "current records):",
        "",
        *(
            f"- `{key}`: " + "; ".join(f"{r.verdict.symbol} {r.verdict} on {r.torch}" for r in recs)
            for key, recs in mine
        ),
        "",
    ]


def render_target(
    view: View,
    cases: dict[str, CaseDir],
    description: str,
    changes: Sequence[tuple[str, str, str, Verdict, Verdict]] = (),
    since: dict[str, str] | None = None,
    splits: dict[tuple[str, str], list[Record]] | None = None,
) -> str:
    """Long: the page of one target, a table row per case and dtype, from its current view."""
    lines = [
        f"# `{view.target}`: {description}",
        "",
        f"Recorded on {machine_text(view.environment)}.  ",
        *(
            [
                f"**Not the pinned torch:** matrix.yaml pins {view.pin}; the newest release recorded here is "
                f"{view.release}.  "
            ]
            if view.off_pin
            else []
        ),
        *(
            [f"Torch builds shown: {', '.join(view.builds)} (the newest record of each run wins).  "]
            if len(view.builds) > 1
            else []
        ),
        *run_lines(view),
        confinement_line(view.records),
        "",
        summary_line(view.counts),
        "",
    ]
    lines[-1:] = [*split_lines(view, splits or {}), ""] if splits else lines[-1:]
    missing = unrecorded(view.records, cases) if any(h.not_started for h in view.runs) else 0
    cut = min(missing, sum(h.not_started for h in view.runs))  # the rest: cases no run of this target has planned
    if missing:  # a run was cut short, and what it left is still unrecorded (a later run may have filled it in)
        lines[-1:] = [
            f"**Incomplete:** {missing} runs of the corpus are missing below: at most {cut} were not "
            "started before a run's deadline (or its interrupt)"
            + (f"; {missing - cut} are of cases added since this target's runs" if missing > cut else "")
            + ".",
            "",
        ]
    single: list[list] = []
    multi: list[list] = []
    earlier, unknown = recorded_before_change(view.records, cases)
    if earlier:
        lines[-1:] = [
            lines[-1],
            "",
            f"† {len(earlier)} rows were recorded with an earlier version of their case (its "
            "files changed since): their verdicts are of that version until a run records this one.",
            "",
        ]
    if unknown:
        lines[-1:] = [
            lines[-1],
            "",
            f"‡ {len(unknown)} rows were recorded before records kept their case's content "
            "hash: the case may have changed since.",
            "",
        ]
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
        lines += [
            "",
            "### Multi-process and multi-GPU cases",
            "",
            "Launched with torchrun, one process per rank (gloo on CPU, NCCL on GPUs; NVLink multicast off).",
            "",
            table(multi, headers),
        ]
    lines += ["", "## Changes between torch releases", ""]
    if len(view.history) < 2:
        lines.append(f"Only torch {view.release} is recorded for this target.")
    else:
        lines.append(
            f"Releases recorded: {', '.join(view.history)} (every verdict per release: "
            f"[`{view.target}-history.md`]({view.target}-history.md))."
        )
        lines += [
            "",
            table(
                [[k, f"{a} → {b}", str(x), str(y)] for k, a, b, x, y in changes], ["run", "releases", "before", "after"]
            )
            if changes
            else "No verdict changes between consecutive releases.",
        ]
    lines += [
        "",
        "Legend: " + ", ".join(f"{v.symbol} {v}" for v in Verdict) + ".",
        f"Raw records: [`results/{view.target}/`](../results/{view.target}/) (one JSON line per record); "
        f"JUnit XML: [`{view.target}/junit.xml`]({view.target}/junit.xml); "
        f"badge: [`{view.target}/badge.json`]({view.target}/badge.json).",
        "",
    ]
    return "\n".join(lines)


def write_reports(
    out: Path,
    views: dict[str, View],
    cases: list[CaseDir],
    descriptions: dict[str, str],
    claims: Claims | None = None,
    sweeps: dict[str, View] | None = None,
    changes: dict[str, list] | None = None,
    since: dict[str, dict[str, str]] | None = None,
    histories: dict[str, dict[str, list[Record]]] | None = None,
    splits: dict[str, dict[tuple[str, str], list[Record]]] | None = None,
    machines: dict[str, str] | None = None,
    last_runs: dict[str, dict[str, LastRun]] | None = None,
) -> list[Path]:
    """Long: every Markdown page and CI artifact of the targets' current views; returns the files that changed (a
    page whose bytes are already there is not written again: changed_files.py)."""
    by_id = {c.case.id: c for c in cases}
    now = functools.cache(lambda: {c: case_identity.content_hash(cd.path) for c, cd in by_id.items()})  # once, if asked
    pages: list[tuple[Path, str]] = []
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, view in views.items():
        (out / name).mkdir(exist_ok=True)
        pages.append(
            (
                out / f"{name}.md",
                render_target(
                    view,
                    by_id,
                    descriptions.get(name, ""),
                    (changes or {}).get(name, []),
                    (since or {}).get(name),
                    (splits or {}).get(name),
                ),
            )
        )
        if histories and len(histories.get(name, {})) > 1:
            pages.append(
                (
                    out / f"{name}-history.md",
                    render_history(name, descriptions.get(name, ""), histories[name], view.pin, now()),
                )
            )
        pages += [
            (out / name / "junit.xml", ci_artifacts.junit_xml(view)),
            (out / name / "badge.json", ci_artifacts.badge(view, by_id)),
        ]
    if views and ci_artifacts.heatmap(views, sorted(by_id), out / "heatmap.png"):
        written.append(out / "heatmap.png")
    issues_page = issue_status.render(cases, histories or {}, splits, machines)
    if issues_page is not None:
        pages.append((out / "upstream-issues.md", issues_page))
    pages.append((out / "README.md", render_index(views, by_id, descriptions, claims, sweeps, histories, last_runs)))
    written += [path for path, text in pages if write_changed(path, text)]
    return written
