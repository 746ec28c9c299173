"""The claims ledger: each claim of the article, judged per target from its cases' recorded repro verdicts."""

from __future__ import annotations

from .corpus import CaseDir
from .results import Record
from .schema import Claim

CONFIRMED, REFUTED, MIXED, INCONCLUSIVE, NOT_TESTABLE, NOT_RUN = (
    "confirmed", "refuted", "mixed", "inconclusive", "not testable here", "not run")
SYMBOL = {CONFIRMED: "✔ confirmed", REFUTED: "✘ refuted", MIXED: "◐ mixed", INCONCLUSIVE: "? inconclusive",
          NOT_TESTABLE: "– not testable", NOT_RUN: "· not run"}


def record_stance(rec: Record, asserts: str) -> str | None:
    """What one repro run says about the claim: confirmed / refuted / inconclusive, or None if skipped."""
    if rec.verdict == "skipped":
        return None
    if rec.verdict in ("reproduces", "does-not-reproduce"):
        failed = rec.verdict == "reproduces"
        return CONFIRMED if failed == (asserts == "failure") else REFUTED
    return INCONCLUSIVE


def judge(claim: Claim, cases: dict[str, CaseDir], records: list[Record]) -> tuple[str, str]:
    """(verdict, detail) of one claim on one target."""
    if claim.untestable:
        return NOT_TESTABLE, claim.untestable
    runs = [r for r in records if r.case in claim.cases and r.variant == "repro"]
    if not runs:
        return NOT_RUN, "no recorded run"
    stances = [(r, record_stance(r, cases[r.case].case.article.asserts if cases[r.case].case.article else "failure"))
               for r in runs if r.case in cases]
    judged = [s for _, s in stances if s is not None]
    if not judged:
        return NOT_TESTABLE, runs[0].why
    if all(s == judged[0] for s in judged):
        return judged[0], f"{len(judged)} run(s)"
    return MIXED, f"{judged.count(CONFIRMED)} of {len(judged)} runs confirm"
