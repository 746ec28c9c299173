"""The claims ledger: each claim of the article, judged per target from its cases' recorded runs and the sweep.

The rules (CONTRIBUTING.md, "Judging a claim") live here and nowhere else:
- stance: a case's `article.stance` (required, no default) says what a failing repro means: `fails` -> the repro
  reproducing confirms the claim; `works` / `measures` -> the repro failing refutes it;
- the article's own fix: a claim with `article_fix: true` is judged on its cases' article_fix runs only (fix-works
  confirms, fix-broken refutes); every other claim on repro runs only. Our fixed.py never decides a claim;
- hardware: a claim with `hardware` is judged only on the targets it lists (a substitute is named in the detail);
  elsewhere it is "not testable here", with what the runs measured there shown beside it;
- scope: a claim with `untested` is "partly tested": the tested part's verdict and what is missing, never a plain
  confirmed / refuted;
- graphs: a claim with `compiles_graph` is judged only on runs whose record shows a graph compiled; without one it
  is "not tested" on that target;
- rates: a claimed failure rate is judged on the measured rate (sweep cells, plus the configurations FP8 cases
  report one per `FP8_CONFIG {json}` line), never on one case's pass / fail.
"""

from __future__ import annotations

import json
import re
from enum import Enum

from reprokit.model.claims import Claim
from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record
from reprokit.model.verdict import Verdict
from reprokit.publish.pages import sweep_report
from reprokit.store.last_runs import LastRun
from reprokit.store.views import View


class ClaimVerdict(str, Enum):
    """What the ledger says of a claim on one target: the one vocabulary of claim verdicts (the value is the word the
    reports and the site print)."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    MIXED = "mixed"
    INCONCLUSIVE = "inconclusive"
    NOT_TESTABLE = "not testable here"
    NOT_RUN = "not run"
    PARTLY_TESTED = "partly tested"

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]


CONFIRMED, REFUTED, MIXED, INCONCLUSIVE, NOT_TESTABLE, NOT_RUN, PARTLY_TESTED = ClaimVerdict
SYMBOL = {
    CONFIRMED: "✔ confirmed",
    REFUTED: "✘ refuted",
    MIXED: "◐ mixed",
    INCONCLUSIVE: "? inconclusive",
    NOT_TESTABLE: "– not testable",
    NOT_RUN: "· not run",
    PARTLY_TESTED: "◔ partly tested",
}
CONFIG_LINE = "FP8_CONFIG "


def record_stance(rec: Record, stance: str) -> ClaimVerdict | None:
    """What one repro run says about its claim, given the case's stance; None if skipped."""
    if not rec.verdict.ran:
        return None
    if rec.verdict in (Verdict.REPRODUCES, Verdict.DOES_NOT_REPRODUCE):
        failed = rec.verdict.failed_as_claimed
        return CONFIRMED if failed == (stance == "fails") else REFUTED
    return INCONCLUSIVE


def article_fix_stance(rec: Record) -> ClaimVerdict | None:
    """What one run of the article's own fix says about the claim that the fix works."""
    if not rec.verdict.ran:
        return None
    return {"fix-works": CONFIRMED, "fix-broken": REFUTED}.get(rec.verdict, INCONCLUSIVE)


def configurations(rec: Record) -> list[dict]:
    """The per-configuration results a rate-measuring case prints (`FP8_CONFIG {json}` lines)."""
    rows = []
    for line in rec.stdout_tail.splitlines():
        if line.startswith(CONFIG_LINE):
            try:
                rows.append(json.loads(line[len(CONFIG_LINE) :]))
            except ValueError:
                continue
    return rows


def rate_stance(claim: Claim, sweep: View | None, runs: list[Record]) -> tuple[ClaimVerdict, str] | None:
    """A claimed failure rate against the measured one; None when the claim names no measure."""
    if claim.sweep is None:
        return None
    failed, total = sweep_report.failing(sweep, claim.sweep.measure) if sweep else (0, 0)
    parts = [f"sweep {failed}/{total}"] if total else []
    if claim.sweep.measure == "fp8-cells-failing":
        # only configurations that compiled: an eager one tests torchao or the hardware, not torch.compile
        configs = [c for r in runs if r.verdict != "skipped" for c in configurations(r) if c.get("mode") != "eager"]
        if configs:
            bad = sum(not c.get("ok") for c in configs)
            parts.append(f"cases {bad}/{len(configs)} configurations")
            failed, total = failed + bad, total + len(configs)
    if not total:
        return NOT_RUN, "no sweep recorded"
    stance = CONFIRMED if failed / total >= claim.sweep.claimed else REFUTED
    source = "sweep" if len(parts) == 1 and parts[0].startswith("sweep") else f"{' + '.join(parts)}, together"
    detail = f"{source}: {failed / total:.1%} ({failed}/{total}) vs {claim.sweep.claimed:.1%} claimed"
    missing = sweep_report.missing_cells(sweep) if sweep else 0
    if (
        missing and stance == REFUTED
    ):  # the cells not recorded could only raise the rate: a partial grid refutes nothing
        return INCONCLUSIVE, f"{detail}, with {missing} cells of the grid not recorded"
    return stance, detail


def _stances(claim: Claim, cases: dict[str, CaseDir], runs: list[Record]) -> list[ClaimVerdict]:
    out = []
    for r in runs:
        cd = cases.get(r.case)
        if claim.article_fix:
            out.append(article_fix_stance(r))
        elif cd is None or cd.case.article is None:
            out.append(INCONCLUSIVE)  # a case that tests no claim of the article cannot decide one
        else:
            out.append(record_stance(r, cd.case.article.stance))
    return [s for s in out if s is not None]


def compiled_a_graph(rec: Record) -> bool:
    """The run's record shows torch.compile compiled at least one graph (Dynamo's unique_graphs)."""
    return bool((rec.dynamo or {}).get("unique_graphs"))


def _tested(
    claim: Claim, cases: dict[str, CaseDir], records: list[Record], sweep: View | None
) -> tuple[ClaimVerdict, str]:
    variant = "article_fix" if claim.article_fix else "repro"
    runs = [r for r in records if r.case in claim.cases and r.variant == variant]
    if claim.compiles_graph:  # a claim about the compiled graph: a run that compiled none tested nothing of it
        graphless = sum(r.verdict.ran and not compiled_a_graph(r) for r in runs)
        runs = [r for r in runs if r.verdict.ran and compiled_a_graph(r)]
        if not runs:
            why = f"{graphless} run(s) compiled no graph" if graphless else "no current run"
            return NOT_RUN, f"not tested: no current run that compiled a graph ({why})"
    if claim.sweep is not None:  # a rate claim: the measured rate decides, not one case's exit status
        return rate_stance(claim, sweep, runs) or (NOT_RUN, "no recorded run")
    judged = _stances(claim, cases, runs)
    what = "article's fix" if claim.article_fix else "repro"
    detail = f"{len(judged)} {what} run(s)" if judged else (runs[0].why if runs else "no recorded run")
    if not judged:
        return (NOT_TESTABLE, runs[0].why) if runs else (NOT_RUN, detail)
    figures = figure_stances(claim, runs)
    if figures:
        stances = [*judged, *(s for s, _ in figures)]
        detail += "; " + "; ".join(text for _, text in figures)
        return (stances[0] if all(s == stances[0] for s in stances) else MIXED), detail
    if all(s == judged[0] for s in judged):
        return judged[0], detail
    return MIXED, f"{judged.count(CONFIRMED)} of {len(judged)} confirm ({detail})"


def printed_value(pattern: str, rec: Record) -> float | None:
    """The number the run printed where `pattern`'s first group is (None: not printed, or not a number)."""
    found = re.search(pattern, rec.stdout_tail or "")
    try:
        return float(found.group(1)) if found else None
    except ValueError:
        return None


def figure_stances(claim: Claim, runs: list[Record]) -> list[tuple[ClaimVerdict, str]]:
    """Each figure of the claim that a repro run printed: (confirmed | refuted, 'DDP/single 1.20 vs the article's
    1.00 (agrees within 0.9 - 1.1: no)'), from the first run that printed it."""
    out = []
    for figure in claim.figures:
        value = next((v for r in runs if r.verdict.ran and (v := printed_value(figure.printed, r)) is not None), None)
        if value is None:
            continue
        agrees = figure.agrees(value)
        out.append(
            (
                CONFIRMED if agrees else REFUTED,
                f"{figure.name} {value:g} vs the article's {figure.claimed:g}: "
                f"{'within' if agrees else 'outside'} {figure.bound}",
            )
        )
    return out


def judge(
    claim: Claim,
    cases: dict[str, CaseDir],
    records: list[Record],
    sweep: View | None = None,
    *,
    target: str | None = None,
) -> tuple[ClaimVerdict, str]:
    """(verdict, detail) of one claim on one target, from its cases' runs and the sweep's measured rate.

    `target` names the target the records come from (the sweep's own target when not given); a hardware claim needs
    it to know whether the records were made on the claimed hardware.
    """
    if claim.untestable:
        return NOT_TESTABLE, claim.untestable
    verdict, detail = _tested(claim, cases, records, sweep)
    if verdict == NOT_RUN and target and not detail.startswith("not tested"):
        detail = f"not tested on {target}: {detail}"
    elif verdict == NOT_RUN and target:
        detail = detail.replace("not tested:", f"not tested on {target}:", 1)
    if claim.hardware is not None:
        where = target or (sweep.target if sweep else None)
        if where not in claim.hardware.targets:
            measured = f"measured here: {verdict} ({detail})" if verdict not in (NOT_RUN, NOT_TESTABLE) else detail
            return NOT_TESTABLE, f"the claim is about {claim.hardware.needs}, not target {where}; {measured}"
        if claim.hardware.targets[where]:
            detail = f"on {claim.hardware.targets[where]}: {detail}"
    if claim.untested and verdict in (CONFIRMED, REFUTED, MIXED):
        return PARTLY_TESTED, f"tested part {verdict} ({detail}); not tested: {claim.untested}"
    return verdict, detail


def outcome(claim: Claim, cases: dict[str, CaseDir], records: list[Record], *, target: str | None = None) -> str:
    """What one release's records say of a claim, for comparing releases: its verdict, and for a partly tested claim
    its tested part's own verdict ("tested part mixed"), so that confirmed -> mixed is a change."""
    verdict, _ = judge(claim, cases, records, None, target=target)
    return f"tested part {_tested(claim, cases, records, None)[0]}" if verdict == PARTLY_TESTED else verdict


def with_history(verdict: str, detail: str, claim: Claim, last_runs: dict[str, LastRun] | None) -> str:
    """A claim no current run tested on a target whose runs of its cases are history (`last_runs`: case -> its last
    run there, store/last_runs.py): the detail says so, and when and on what they last ran, never "no recorded run"."""
    runs = last_runs or {}
    mine = [(case, runs[case]) for case in claim.cases if case in runs]
    if verdict != NOT_RUN or not mine:
        return detail
    told = "; ".join(
        f"{case} last ran {last.record.recorded_at[:10]} on {where(last)}, torch {last.record.torch}: "
        f"{last.record.verdict}"
        for case, last in mine
    )
    if detail.endswith("no recorded run"):
        return detail.removesuffix("no recorded run") + f"no current run, history only: {told}"
    if detail.endswith("(no current run)"):  # a claim about a compiled graph
        return detail.removesuffix("(no current run)") + f"(no current run, history only: {told})"
    return detail


def where(last: LastRun) -> str:
    """The device a history run saw: "2 × NVIDIA H200", "cpu"."""
    device = last.record.device
    return f"{last.devices} × {device}" if last.devices and device != "cpu" else device
