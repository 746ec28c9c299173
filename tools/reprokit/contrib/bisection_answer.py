"""What a bisection's results say: one release's result (Seen), the answer in the words `reprokit bisect` prints,
and why a result decides nothing with the retry that would decide it (bisection.py's search gathers the results)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from reprokit.model.verdict import Verdict


@dataclass(frozen=True)
class Seen:
    """One release's result: its verdict and the record's reason (a timeout's limit, a different exception)."""

    verdict: Verdict
    why: str = ""
    seconds: float = 0.0  # how long the run took (0: unknown)


@dataclass(frozen=True)
class Answer:
    """What the search found, in the words the command prints."""

    kind: str  # "fixed" | "regressed" | "no change" | "undecided"
    last: str | None = None  # the last release on the old side of the change
    first: str | None = None  # the first release on the new side
    untested: tuple[str, ...] = ()  # releases between last and first that no run tested
    unsettled: tuple[tuple[str, str], ...] = ()  # (release, why) of results that decide nothing, where they matter
    retry: str = ""
    stopped: str = ""  # why the search stopped before it could decide

    def line(self) -> str:
        if self.kind == "undecided" and self.stopped:
            return f"undecided: {self.stopped}" + (f"; {self.retry}" if self.retry else "")
        if self.kind == "undecided":
            where = f" between {self.last} and {self.first}" if self.last and self.first else ""
            reasons = "; ".join(f"{v}: {why}" for v, why in self.unsettled) or "fewer than two releases decided"
            return f"undecided{where}: {reasons}" + (f"; {self.retry}" if self.retry else "")
        if self.kind == "no change":
            return f"no change among the tested releases ({self.last} – {self.first})"
        old, new = ("bad", "good") if self.kind == "fixed" else ("good", "bad")
        if self.untested:
            return (
                f"{self.kind} between last {old} {self.last} and first {new} {self.first}; not tested in between: "
                f"{', '.join(self.untested)} (the change may be in any of them; bisect without --no-between "
                "to test them)"
            )
        return f"{self.kind} in {self.first}: last {old} {self.last}, first {new} {self.first}"


def why_undecided(seen: Seen, timeout: float | None, needed: float = 0.0) -> tuple[str, str]:
    """The reason a result decides nothing, and the retry that would decide it; needed: the longest a run that
    finished took (on another release), the only measure of what the script needs."""
    first = (seen.why or "").strip().splitlines()[0][:160] if (seen.why or "").strip() else ""
    if seen.verdict is Verdict.TIMEOUT or "timeout" in first or "still running" in first:
        # the limit that killed it may be longer than --timeout (a timed-out run is confirmed with a longer one)
        killed = max((float(n) for n in re.findall(r"after (\d+(?:\.\d+)?) s", first)), default=0.0)
        limit = max(timeout or 0.0, killed)
        if needed > limit:
            retry = (
                f"run again with --timeout {math.ceil(needed * 1.5)} (the runs that finished took up to {needed:.0f} s)"
            )
        else:  # doubling a limit that failed guesses: say that what it needs was not measured
            retry = (
                "run again with a longer --timeout: no run finished, so what the script needs is unknown (one "
                "release run alone with a generous limit, reprokit run --torch V --timeout 3600, measures it)"
                + (f"; it was killed after {limit:g} s" if limit else "")
            )
        return f"timed out ({first or 'past its limit'})", retry
    if seen.verdict is Verdict.FAILS_DIFFERENTLY:
        return (
            f"{seen.verdict} ({first})",
            "the oracle does not name what the script does there: read that "
            "failure (reprokit run --torch V) and give the oracle that names the bug (--raises, --match)",
        )
    if seen.verdict is Verdict.FLAKY:
        return f"flaky ({first})", "make the script deterministic (a seed), then bisect again"
    if seen.verdict is Verdict.SKIPPED:
        return f"not run ({first})", "run it where it can run (--force, another target)"
    return f"{seen.verdict} ({first})", "run that release alone (reprokit run --torch V) and read its output"


def undecided(
    unsettled: list[tuple[str, Seen]],
    timeout: float | None,
    a: str | None = None,
    b: str | None = None,
    stopped: str = "",
    needed: float = 0.0,
) -> Answer:
    reasons = [(v, *why_undecided(s, timeout, needed)) for v, s in unsettled]
    longer = [r for _, _, r in reasons if r.startswith("run again with ")]  # one: the longest asked for
    retries = sorted(
        {r for _, _, r in reasons if r not in longer} | ({max(longer, key=_limit_asked)} if longer else set())
    )
    return Answer(
        "undecided", a, b, unsettled=tuple((v, why) for v, why, _ in reasons), retry="; ".join(retries), stopped=stopped
    )


def _limit_asked(retry: str) -> float:
    """The limit a retry asks for or the limit that killed the run: the largest number of seconds it names."""
    return max(
        (float(n) for n in re.findall(r"(\d+(?:\.\d+)?) s\b|--timeout (\d+)", retry) for n in n if n), default=0.0
    )


def same_reason(seen: Seen) -> str:
    """The reason a result decides nothing, its numbers left out (a limit's seconds, a tensor's sizes)."""
    return re.sub(r"\d+(\.\d+)?", "N", why_undecided(seen, None)[0])
