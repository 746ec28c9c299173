"""The claims ledger section of the index page: each claim, the cases that test it, its verdict per target and the
releases over which that verdict holds."""

from __future__ import annotations

from collections import Counter

from reprokit.model.claims import Claims
from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record
from reprokit.publish.markdown import table
from reprokit.publish.pages import ledger
from reprokit.publish.pages.cells import cell, wrapped
from reprokit.store.last_runs import LastRun
from reprokit.store.views import View


def holds_since(claim, cases: dict[str, CaseDir], every: dict[str, list[Record]], target: str, now: str) -> str:
    """' (holds 2.8.0 – 2.15.0)' or ' (since 2.11.0; 2.9.1: refuted)': the releases over which the claim's current
    verdict holds (`now`: ledger.outcome of the records shown), judged on each recorded release's records (the sweep
    is one release only, so not used here); a release of that stretch, or after it, with no current run of the claim's
    cases is named, never taken as holding it (' ...; not run on 2.12.1, 2.15.0')."""
    if len(every) < 2 or now in (ledger.NOT_TESTABLE, ledger.NOT_RUN) or claim.sweep:
        return ""
    outcomes = [(rel, ledger.outcome(claim, cases, recs, target=target)) for rel, recs in every.items()]
    judged = [(rel, v) for rel, v in outcomes if v != ledger.NOT_RUN]
    if len(judged) < 2 or judged[-1][1] != now:
        return ""
    start = len(judged) - 1
    while start > 0 and judged[start - 1][1] == now:
        start -= 1
    after = [rel for rel, _ in outcomes][[rel for rel, _ in outcomes].index(judged[start][0]) :]
    gaps = [rel for rel, v in outcomes if v == ledger.NOT_RUN and rel in after]
    missing = f"; not run on {', '.join(gaps)}" if gaps else ""
    if start == 0:
        return f" (holds {judged[0][0]} – {judged[-1][0]}{missing})"
    return f" (since {judged[start][0]}; {judged[start - 1][0]}: {judged[start - 1][1]}{missing})"


def render_ledger(
    claims: Claims,
    views: dict[str, View],
    cases: dict[str, CaseDir],
    sweeps: dict[str, View],
    histories: dict[str, dict[str, list[Record]]] | None = None,
    last_runs: dict[str, dict[str, LastRun]] | None = None,
) -> list[str]:
    """The section's lines; `last_runs`: target -> case -> its last run there where its runs are all history."""
    rows: list[list[str]] = []
    per_target: dict[str, Counter[str]] = {t: Counter() for t in views}
    for claim in claims.claims:
        cells = []
        for target, view in views.items():
            verdict, detail = ledger.judge(claim, cases, view.records, sweeps.get(target), target=target)
            detail = ledger.with_history(verdict, detail, claim, (last_runs or {}).get(target))
            per_target[target][verdict] += 1
            cells.append(
                ledger.SYMBOL[verdict]
                + (
                    f": {cell(detail, 50 if 'history only' not in detail else 400)}"
                    if verdict in (ledger.NOT_TESTABLE, ledger.MIXED, ledger.PARTLY_TESTED, ledger.INCONCLUSIVE)
                    and not claim.untestable
                    or claim.sweep
                    or detail.startswith("not tested on")
                    else ""
                )
                + holds_since(
                    claim,
                    cases,
                    (histories or {}).get(target, {}),
                    target,
                    ledger.outcome(claim, cases, view.records, target=target),
                )
            )
        tested_by = ", ".join(
            [f"[`{c}`](../cases/{c}/)" for c in claim.cases] + (["the model sweep"] if claim.sweep else [])
        ) or cell(claim.untestable, 70)
        rows.append([f"§{claim.section}", wrapped(claim.claim), tested_by, *cells])
    lines = [
        "## Claims ledger",
        "",
        "Each claim of the article, the case(s) that test it and what the recorded runs say on each target. "
        "A claim of failure is confirmed when its repro reproduces; a claim that some code works is refuted "
        "when that code fails.",
        "",
    ]
    lines.append(table(rows, ["§", "claim", "tested by", *views]))
    lines += [
        "",
        "Per target: "
        + "; ".join(f"`{t}` " + ", ".join(f"{n} {v}" for v, n in sorted(c.items())) for t, c in per_target.items())
        + ".",
        "",
    ]
    return lines
