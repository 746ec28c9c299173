"""The claims ledger: each claim of the article, judged per target from its cases' recorded repro verdicts."""

from __future__ import annotations

from . import sweep_report
from .corpus import CaseDir
from .records import Record
from .schema import Claim
from .verdict import Verdict
from .views import View

CONFIRMED, REFUTED, MIXED, INCONCLUSIVE, NOT_TESTABLE, NOT_RUN = (
    "confirmed", "refuted", "mixed", "inconclusive", "not testable here", "not run")
SYMBOL = {CONFIRMED: "✔ confirmed", REFUTED: "✘ refuted", MIXED: "◐ mixed", INCONCLUSIVE: "? inconclusive",
          NOT_TESTABLE: "– not testable", NOT_RUN: "· not run"}


def record_stance(rec: Record, asserts: str) -> str | None:
    """What one repro run says about the claim: confirmed / refuted / inconclusive, or None if skipped."""
    if not rec.verdict.ran:
        return None
    if rec.verdict in (Verdict.REPRODUCES, Verdict.DOES_NOT_REPRODUCE):
        failed = rec.verdict.failed_as_claimed
        return CONFIRMED if failed == (asserts == "failure") else REFUTED
    return INCONCLUSIVE


def sweep_stance(claim: Claim, sweep: View | None) -> tuple[str, str] | None:
    """What the target's model sweep says about a claimed failure rate; None when the claim names no measure."""
    if claim.sweep is None:
        return None
    failed, total = sweep_report.failing(sweep, claim.sweep.measure) if sweep else (0, 0)
    if not total:
        return NOT_RUN, "no sweep recorded"
    stance = CONFIRMED if failed / total >= claim.sweep.claimed else REFUTED
    return stance, f"sweep: {failed / total:.1%} ({failed}/{total}) vs {claim.sweep.claimed:.1%} claimed"


def judge(claim: Claim, cases: dict[str, CaseDir], records: list[Record],
          sweep: View | None = None) -> tuple[str, str]:
    """(verdict, detail) of one claim on one target, from its cases' repro runs and the sweep's measured rate."""
    if claim.untestable:
        return NOT_TESTABLE, claim.untestable
    measured = sweep_stance(claim, sweep)
    runs = [r for r in records if r.case in claim.cases and r.variant == "repro"]
    stances = [record_stance(r, cases[r.case].case.article.asserts if cases[r.case].case.article else "failure")
               for r in runs if r.case in cases]
    judged = [s for s in stances if s is not None]
    detail = f"{len(judged)} run(s)" if judged else (runs[0].why if runs else "no recorded run")
    if measured and measured[0] != NOT_RUN:
        judged.append(measured[0])
        detail = measured[1] + (f"; {len(judged) - 1} case run(s)" if len(judged) > 1 else "")
    if not judged:
        return (NOT_TESTABLE, runs[0].why) if runs else (measured or (NOT_RUN, detail))
    if all(s == judged[0] for s in judged):
        return judged[0], detail
    return MIXED, f"{judged.count(CONFIRMED)} of {len(judged)} confirm ({detail})"
