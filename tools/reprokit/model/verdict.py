"""What a verdict means, defined once: every renderer, the ledger, autofix, upstream and the gate ask this module.

A run's verdict is one `Verdict`; a run's variant plays one `Role` (the failing pattern, our fix, the article's own
fix, or a sweep cell, which is read like a repro). `Tally` counts a list of records the one way every page shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol


class Verdict(str, Enum):
    REPRODUCES = "reproduces"
    DOES_NOT_REPRODUCE = "does-not-reproduce"
    FAILS_DIFFERENTLY = "fails-differently"
    TIMEOUT = "timeout"
    FIX_WORKS = "fix-works"
    FIX_BROKEN = "fix-broken"
    SKIPPED = "skipped"
    # Runs of the same variant disagreed (`--repeat N`, or a change re-run): "k of N failed as claimed". Never a fix,
    # never a regression; it needs attention until the case is made deterministic.
    FLAKY = "flaky"

    # The member is its value as a str: str's own methods print it (Enum's value lookup took most of the time of
    # rendering 25,000 records).
    __str__ = str.__str__
    # str.__format__ takes format_spec positional-only, Enum declares it by name: the same call at runtime
    __format__ = str.__format__  # type: ignore[assignment]

    @property
    def ran(self) -> bool:
        """The script ran here (a skip is not a result)."""
        return self in _RAN

    @property
    def failed_as_claimed(self) -> bool:
        """The repro failed the way its case says: the only verdict that confirms a claimed failure."""
        return self in _FAILED_AS_CLAIMED

    @property
    def compile_failure(self) -> bool:
        """A sweep cell counts toward the failure rate: an error, an accuracy failure, a crash or a hang."""
        return self in _COMPILE_FAILURE

    @property
    def needs_attention(self) -> bool:
        """A CI failure (JUnit): the fix does not work, or the repro did something its case does not describe."""
        return self in _NEEDS_ATTENTION

    @property
    def symbol(self) -> str:
        return SYMBOL[self]


# The sets behind the properties (a member lookup on the Enum class per call is slow enough to show in a large render).
_RAN = frozenset(v for v in Verdict if v is not Verdict.SKIPPED)
_FAILED_AS_CLAIMED = frozenset({Verdict.REPRODUCES})
_COMPILE_FAILURE = frozenset({Verdict.REPRODUCES, Verdict.FAILS_DIFFERENTLY, Verdict.TIMEOUT})
_NEEDS_ATTENTION = frozenset({Verdict.FIX_BROKEN, Verdict.FAILS_DIFFERENTLY, Verdict.TIMEOUT, Verdict.FLAKY})
SYMBOL = {
    Verdict.REPRODUCES: "🔴",
    Verdict.DOES_NOT_REPRODUCE: "🟢",
    Verdict.FAILS_DIFFERENTLY: "🟠",
    Verdict.TIMEOUT: "⏱",
    Verdict.SKIPPED: "⚪",
    Verdict.FIX_WORKS: "✅",
    Verdict.FIX_BROKEN: "❌",
    Verdict.FLAKY: "🟡",
}

# What each verdict means, one sentence each: the site's glossary and every page that defines a verdict read these.
MEANING = {
    Verdict.REPRODUCES: "the repro failed the way its case.yaml says (exception class and message, wrong result, "
    "hang or output): the claimed failure happens on this torch and hardware",
    Verdict.DOES_NOT_REPRODUCE: "the repro ran and exited 0: the claimed failure does not happen on this torch and "
    "hardware (a finding, not an error)",
    Verdict.FAILS_DIFFERENTLY: "the repro failed, but not as its case.yaml says (another exception, a crash, out of "
    "memory)",
    Verdict.TIMEOUT: "the run was killed at its timeout, its case not expecting a hang",
    Verdict.FIX_WORKS: "the fix (ours, or the article's own) exited 0, having checked its own result against eager or "
    "a float64 reference",
    Verdict.FIX_BROKEN: "the fix did not exit 0: it failed, or its result did not match the reference",
    Verdict.SKIPPED: "not run here, with the reason (a device, a launcher or a torch the case needs): not a result",
    Verdict.FLAKY: "runs of the same variant disagreed (--repeat N, or the re-run of a changed verdict): k of N failed "
    "as claimed",
}


class Role(str, Enum):
    REPRO = "repro"  # the failing pattern (a sweep cell plays this role too)
    FIX = "fixed"  # our fix: must exit 0, having checked its result
    ARTICLE_FIX = "article_fix"  # the article's own fix, where it differs from ours: judged apart from ours

    @classmethod
    def of(cls, variant: str) -> Role:
        return _ROLE_OF.get(variant, _REPRO)


_ROLE_OF = {"fixed": Role.FIX, "article_fix": Role.ARTICLE_FIX}
_REPRO = Role.REPRO


class HasVerdict(Protocol):
    variant: str
    verdict: Verdict


@dataclass(frozen=True)
class Tally:
    """Counts over records, split by role; every page prints these same numbers."""

    runs: int = 0
    repros_run: int = 0
    reproduce: int = 0
    do_not_reproduce: int = 0
    fail_differently: int = 0
    timeout: int = 0
    repros_skipped: int = 0
    fixes_work: int = 0
    fixes_broken: int = 0
    fixes_skipped: int = 0
    article_fixes_work: int = 0
    article_fixes_broken: int = 0
    article_fixes_skipped: int = 0
    flaky: int = 0  # runs of one variant that disagreed (repros and fixes): none of the counts above
    machine_dependent: int = 0  # verdicts another machine did not share (same torch, same content): none of the above

    @property
    def fixes_run(self) -> int:
        return self.fixes_work + self.fixes_broken

    @property
    def article_fixes_run(self) -> int:
        return self.article_fixes_work + self.article_fixes_broken

    def fixes_text(self) -> str:
        """'31/32 work', the one wording of our fixes' figure."""
        return f"{self.fixes_work}/{self.fixes_run} work"

    def article_fixes_text(self) -> str:
        return f"{self.article_fixes_work}/{self.article_fixes_run} work" if self.article_fixes_run else "—"


def tally(records: Iterable[HasVerdict]) -> Tally:
    counts: dict[str, int] = dict.fromkeys(Tally.__dataclass_fields__, 0)
    for rec in records:
        counts["runs"] += 1
        role, verdict = Role.of(rec.variant), rec.verdict
        if verdict is Verdict.FLAKY:
            counts["flaky"] += 1
            continue
        if getattr(rec, "machine_dependent", False):
            counts["machine_dependent"] += 1
            continue
        if role is Role.REPRO:
            if verdict is Verdict.SKIPPED:
                counts["repros_skipped"] += 1
                continue
            counts["repros_run"] += 1
            field = _REPRO_FIELD.get(verdict)
        else:
            field = _FIX_FIELD[role].get(verdict)
        if field:
            counts[field] += 1
    return Tally(**counts)


_REPRO_FIELD = {
    Verdict.REPRODUCES: "reproduce",
    Verdict.DOES_NOT_REPRODUCE: "do_not_reproduce",
    Verdict.FAILS_DIFFERENTLY: "fail_differently",
    Verdict.TIMEOUT: "timeout",
}
_FIX_FIELD = {
    role: {
        Verdict.FIX_WORKS: f"{prefix}_work",
        Verdict.FIX_BROKEN: f"{prefix}_broken",
        Verdict.SKIPPED: f"{prefix}_skipped",
    }
    for role, prefix in ((Role.FIX, "fixes"), (Role.ARTICLE_FIX, "article_fixes"))
}


def in_rate(rec: HasVerdict) -> bool:
    """A repro that ran and decides (neither flaky nor machine-dependent): the denominator of both rates."""
    return Role.of(rec.variant) is Role.REPRO and rec.verdict.ran and decisive(rec)


def reproduce_rate(records: Iterable[HasVerdict]) -> tuple[int, int]:
    """(repros that failed as claimed, repros that ran): the failure rate of the cases. A flaky repro is in neither
    (its runs disagreed: it decides nothing until it is made deterministic), nor is a machine-dependent one."""
    ran = [r for r in records if in_rate(r)]
    return sum(r.verdict.failed_as_claimed for r in ran), len(ran)


def decisive(rec: HasVerdict) -> bool:
    """A verdict that can take part in a change: neither flaky (its runs disagreed) nor machine-dependent (another
    machine gave the same torch and run identity another verdict): those two say nothing about a torch release."""
    return rec.verdict is not Verdict.FLAKY and not getattr(rec, "machine_dependent", False)


def is_change(before: HasVerdict, after: HasVerdict) -> bool:
    """Whether the same run's verdict changed between two releases: the one test behind every changes page, feed entry,
    'since'/'fixed in', history line, grid mark and compare row. A machine difference is never a change, nor is a skip
    on either side (a run that newly ran, or no longer ran: nothing was observed on one side)."""
    return (
        before.verdict != after.verdict
        and before.verdict.ran
        and after.verdict.ran
        and decisive(before)
        and decisive(after)
    )


def rate_text(hit: int, total: int, digits: int = 1) -> str:
    return f"{hit / total:.{digits}%} ({hit}/{total})" if total else "—"


def changed(expected: dict[str, Verdict], observed: dict[str, Verdict]) -> list[tuple[str, Verdict | None, Verdict]]:
    """Runs whose verdict differs from the expected state, in either direction: (key, expected or None, observed)."""
    return [
        (key, expected.get(key), verdict) for key, verdict in sorted(observed.items()) if expected.get(key) != verdict
    ]
