"""glossary.html: the verdict words, each with what it means (model/verdict.py's MEANING), the short word a grid cell
shows, and what it counts toward, read from the verdict's own properties (ran, failed as claimed, a compile failure of
the sweep, needs attention) and model/attribution.py's compile stages: this page decides nothing itself."""

from __future__ import annotations

from dataclasses import dataclass

from reprokit.model.attribution import COMPILE_STAGES
from reprokit.model.verdict import MEANING, Verdict

# The grid's word for a verdict: with its symbol, short enough that every recorded release fits a 1440 px screen.
SHORT_WORD = {
    Verdict.REPRODUCES: "fails",
    Verdict.DOES_NOT_REPRODUCE: "works",
    Verdict.FAILS_DIFFERENTLY: "differs",
    Verdict.TIMEOUT: "timeout",
    Verdict.FIX_WORKS: "fix ok",
    Verdict.FIX_BROKEN: "fix fails",
    Verdict.SKIPPED: "skip",
    Verdict.FLAKY: "flaky",
}
BY_MACHINE = "by machine"  # a machine-dependent verdict's word: each machine's verdict is in the cell's tip
FIXES = (Verdict.FIX_WORKS, Verdict.FIX_BROKEN)


@dataclass(frozen=True)
class Entry:
    verdict: Verdict
    short: str
    meaning: str
    counts: list[str]  # what it counts toward, one clause each

    @property
    def word(self) -> str:
        return str(self.verdict)


def counts_toward(v: Verdict) -> list[str]:
    """What a record with this verdict adds to the published figures, from the verdict's properties."""
    stages = ", ".join(sorted(COMPILE_STAGES))
    out = []
    if v in FIXES:
        out.append(
            'the fixes\' figure ("n/m work"): a fix that ran'
            + (" and worked" if v is Verdict.FIX_WORKS else ", counted as not working")
        )
    elif v.ran and v is not Verdict.FLAKY:
        out.append("the denominator of both rates: a repro that ran")
    if v.failed_as_claimed:
        out.append(
            "the numerator of the any-reason rate; and of the torch.compile failure rate when it failed in a "
            f"stage of the compile stack ({stages}) of a case that declares neither documented behaviour nor a "
            "cause outside torch.compile"
        )
    if v.compile_failure:
        out.append("a failing cell of the model sweep's rates (an error, an accuracy failure or a hang)")
    if v.needs_attention:
        out.append("a CI failure in the JUnit report (it needs attention)")
    if not v.ran:
        out.append("no rate: a skip is not a result")
    elif v is Verdict.FLAKY:
        out.append("no rate: never a fix, a regression or a figure of a rate")
    return out


def entries() -> list[Entry]:
    return [Entry(v, SHORT_WORD[v], MEANING[v], counts_toward(v)) for v in Verdict]
