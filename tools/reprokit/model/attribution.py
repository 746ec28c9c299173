"""Which failures are torch.compile's: the compile rate counts only these, the any-reason rate every failure as
claimed. Two rates, never mixed (the article's 63.2% is set beside the first)."""

from __future__ import annotations

from collections.abc import Iterable

from reprokit.model.case import Case
from reprokit.model.records import Record, Stage
from reprokit.model.verdict import Verdict, in_rate

# Stages of torch's compile stack, as the probe names them from the traceback (or the ablation ladder places a wrong
# result): a failure at `runtime` (the case's own code, an eager error) or in `distributed` is not compile's.
COMPILE_STAGES = frozenset({Stage.DYNAMO, Stage.AOT_AUTOGRAD, Stage.INDUCTOR, Stage.EXPORT})


def outside_compile(case: Case | None) -> str | None:
    """Why no failure of this case counts as torch.compile's (documented behaviour, invalid usage, a missing
    package, the article's own code); None when its failures may."""
    if case is None:
        return None
    if case.documented:
        return f"documented behaviour ({case.documented})"
    if case.outside_compile:
        return f"{case.outside_compile.kind}: {case.outside_compile.why}"
    return None


def compile_failure(record: Record, case: Case | None) -> bool:
    """A repro that failed as claimed, in a stage of the compile stack, of a case whose failure may be compile's."""
    return record.verdict is Verdict.REPRODUCES and record.stage in COMPILE_STAGES and outside_compile(case) is None


def compile_rate(records: Iterable[Record], cases: dict[str, Case]) -> tuple[int, int]:
    """(torch.compile failures, repros that ran): the numerator leaves out every failure that is not compile's; the
    denominator is the any-reason rate's (each repro that ran, flaky and machine-dependent ones aside), so the two
    rates compare."""
    ran = [r for r in records if in_rate(r)]
    return sum(compile_failure(r, cases.get(r.case)) for r in ran), len(ran)
