"""Judge an observation: the verdict of a repro or a fix against its case's oracle (what verdicts mean: verdict.py)."""

from __future__ import annotations

from collections.abc import Mapping

import regex

from reprokit.model.case import Oracle
from reprokit.model.records import RunStatus, Stage
from reprokit.model.verdict import Verdict
from reprokit.run.execute import Observation


def _exception_matches(wanted: str, observed: str | None, chain: list[str]) -> bool:
    names = [n for n in [observed, *chain] if n]
    if "." in wanted:
        return wanted in names
    return any(n.rsplit(".", 1)[-1] == wanted for n in names)


REGEX_SECONDS = 2.0  # an oracle's regex on a few KB of text; a pattern that backtracks for longer decides nothing


class OracleTimeout(Exception):
    pass


def _search(pattern: str, text: str, flags: int = 0) -> bool:
    """re.search, cut off after REGEX_SECONDS (the `regex` package's timeout): case output must not hang the runner."""
    try:
        return regex.search(pattern, text, flags, timeout=REGEX_SECONDS) is not None
    except TimeoutError:
        raise OracleTimeout(f"the oracle's regex {pattern[:60]!r} timed out after {REGEX_SECONDS:.0f} s") from None
    except regex.error as err:  # validation refuses such a pattern; a case.yaml edited since is judged, not crashed on
        raise OracleTimeout(f"the oracle's regex {pattern[:60]!r} is not valid ({err})") from None


def _output_matches(oracle: Oracle, obs: Observation) -> bool:
    text = obs.stdout_tail if oracle.kind == "stdout" else obs.stderr_tail
    return _search(oracle.match or "", text, regex.MULTILINE)


SKIP_EXIT_CODE = 77  # a script's "not applicable here" (the automake/ctest convention); its last line says why


def _skipped(obs: Observation) -> tuple[Verdict, str] | None:
    if obs.status == RunStatus.FAIL and obs.exit_code == SKIP_EXIT_CODE and not obs.exception:
        lines = obs.stdout_tail.strip().splitlines()
        return Verdict.SKIPPED, f"the script skipped itself: {lines[-1] if lines else 'no reason printed'}"
    return None


def repro_verdict(oracle: Oracle, obs: Observation) -> tuple[Verdict, str]:
    """The verdict of a repro script and one line saying why."""
    try:
        return _repro_verdict(oracle, obs)
    except OracleTimeout as err:
        return Verdict.FAILS_DIFFERENTLY, str(err)


def _repro_verdict(oracle: Oracle, obs: Observation) -> tuple[Verdict, str]:
    if obs.malformed:  # whatever the oracle: a tampered observation never reproduces
        return Verdict.FAILS_DIFFERENTLY, f"malformed observation ({obs.malformed})"
    if obs.over_budget:  # stopped by the runner's budget, whatever it printed: not torch's behaviour
        return Verdict.FAILS_DIFFERENTLY, f"over its {obs.over_budget} budget"
    if skipped := _skipped(obs):
        return skipped
    chain: list = next((p.get("chain", []) for p in obs.probes if p.get("exception")), [])
    if oracle.kind == "hangs":
        if obs.status == RunStatus.TIMEOUT:
            return Verdict.REPRODUCES, f"still running after {obs.seconds:.0f} s"
        if obs.status == RunStatus.PASS:
            return Verdict.DOES_NOT_REPRODUCE, "finished without hanging"
        return Verdict.FAILS_DIFFERENTLY, f"expected a hang, got {obs.status}"
    if obs.status == RunStatus.TIMEOUT:
        return Verdict.TIMEOUT, f"killed after {obs.seconds:.0f} s"
    if oracle.kind in ("stdout", "stderr"):
        if _output_matches(oracle, obs):
            return Verdict.REPRODUCES, f"{oracle.kind} matches {oracle.match!r}"
        if obs.status == RunStatus.PASS:
            return Verdict.DOES_NOT_REPRODUCE, f"{oracle.kind} does not match {oracle.match!r}"
        return Verdict.FAILS_DIFFERENTLY, f"expected output {oracle.match!r}, got {obs.status}"
    if obs.status == RunStatus.PASS:
        return Verdict.DOES_NOT_REPRODUCE, "ran and exited 0"
    if oracle.kind == "nonzero-exit":
        return Verdict.REPRODUCES, f"{obs.status} (exit {obs.exit_code})"
    if obs.status != RunStatus.FAIL:
        return Verdict.FAILS_DIFFERENTLY, f"expected an exception, got {obs.status}" + (
            f" ({obs.signal})" if obs.signal else ""
        )
    wanted = "AssertionError" if oracle.kind == "wrong-result" else oracle.exception
    if wanted and not _exception_matches(wanted, obs.exception, chain):
        return Verdict.FAILS_DIFFERENTLY, f"expected {wanted}, got {obs.exception}"
    if oracle.match and not _search(oracle.match, obs.message or ""):
        return Verdict.FAILS_DIFFERENTLY, f"{obs.exception} message does not match {oracle.match!r}"
    return Verdict.REPRODUCES, f"{obs.exception or 'exit ' + str(obs.exit_code)}"


def fix_verdict(oracle: Oracle, obs: Observation) -> tuple[Verdict, str]:
    try:
        return _fix_verdict(oracle, obs)
    except OracleTimeout as err:
        return Verdict.FIX_BROKEN, str(err)


def _fix_verdict(oracle: Oracle, obs: Observation) -> tuple[Verdict, str]:
    if obs.malformed:
        return Verdict.FIX_BROKEN, f"malformed observation ({obs.malformed})"
    if obs.over_budget:
        return Verdict.FIX_BROKEN, f"over its {obs.over_budget} budget"
    if skipped := _skipped(obs):
        return skipped
    if obs.status != RunStatus.PASS:
        return Verdict.FIX_BROKEN, f"{obs.status}: {obs.exception or obs.signal or 'exit ' + str(obs.exit_code)}"
    if oracle.kind in ("stdout", "stderr") and _output_matches(oracle, obs):
        return Verdict.FIX_BROKEN, f"{oracle.kind} still matches {oracle.match!r}"
    return Verdict.FIX_WORKS, "ran and exited 0"


LADDER = ("eager", "aot_eager")  # then the case's own backend (inductor by default)


def ladder_stage(ladder: Mapping[str, str]) -> Stage:
    """The first backend on the eager -> aot_eager -> inductor ladder that fails names the faulty stage."""
    if ladder["eager"] != RunStatus.PASS:
        return Stage.DYNAMO
    if ladder["aot_eager"] != RunStatus.PASS:
        return Stage.AOT_AUTOGRAD
    return Stage.INDUCTOR
