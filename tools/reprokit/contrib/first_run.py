"""The one contained plain run of a script new-case is given (--from): how it ended, the oracle that ending proposes,
and the verdict `reprokit run` gives it under the oracle the case will hold."""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import yaml

from reprokit.contrib.first_failure import before_own_code
from reprokit.model.case import Oracle
from reprokit.model.records import RunStatus
from reprokit.model.schema import EnvironmentProblem
from reprokit.model.verdict import Verdict
from reprokit.run import execute
from reprokit.run.child_setup import write_readable_script
from reprokit.run.outcome import repro_verdict
from reprokit.run.scheduler import CONFIRM_FACTOR


@dataclass(frozen=True)
class Observed:
    """One plain run of a script from an issue: how it ended and the oracle that ending suggests."""

    exit_code: int | None  # None: it ran past the timeout
    exception: str | None  # the class named on the last traceback's exception line, as Python printed it
    message: str
    oracle: dict | None  # None: nothing failed here, so nothing to propose
    observation: execute.Observation | None = None  # the run itself, judged by `run`'s oracle code
    torch: str = ""  # the torch version that ran it, as the probe read it


def judged(oracle: dict, seen: Observed) -> tuple[Verdict, str]:
    """The verdict `reprokit run` gives this observation under `oracle`, with the same words."""
    if seen.observation is None:
        return Verdict.SKIPPED, "not run"
    return repro_verdict(Oracle.model_validate(oracle), seen.observation)


def exception_line(stderr: str) -> tuple[str | None, str]:
    """The exception class and message of the last traceback in stderr (chained tracebacks: the one raised last)."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return None, ""
    for line in lines[starts[-1] + 1 :]:
        if line and not line.startswith((" ", "\t")):
            m = re.match(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$", line)
            return (m.group(1), (m.group(2) or "").strip()) if m else (None, line)
    return None, ""


def message_regex(message: str) -> str | None:
    """A stable prefix of an error message as a regex: cut before numbers, quotes and brackets (they vary by run)."""
    prefix = re.split(r"[0-9'\"(\[<{]", message, maxsplit=1)[0][:60].strip().rstrip(":,;.")
    return re.escape(prefix) if len(prefix) >= 8 else None


def _observe_once(script: Path, timeout: float) -> execute.Observation:
    with tempfile.TemporaryDirectory(prefix="reprokit-new-case-") as tmp:
        copy = write_readable_script(Path(tmp) / script.name, copy_of=script)
        return execute.observe(
            copy,
            env=dict(os.environ),
            timeout=timeout,
            extra_env={"REPRO_DEVICE": os.environ.get("REPRO_DEVICE", "cpu")},
        )


def observe(script: Path, timeout: float, log=print) -> Observed:
    """Run the script once as an issue's reader would (plain python, CPU), contained as `reprokit run` contains a case
    (the script is code from an issue: no secret of this shell reaches it), and propose the oracle its failure fits.
    A run past its limit is run again with a longer one, as `run` does, before a hang is proposed: a busy machine
    must not make one."""
    seen = _observe_once(script, timeout)
    if seen.status == RunStatus.TIMEOUT:
        longer = timeout * CONFIRM_FACTOR
        seen = _observe_once(script, longer)
        log(
            f"it ran past its {timeout:.0f} s limit; run again with {longer:.0f} s: "
            + ("past that too" if seen.status == RunStatus.TIMEOUT else f"it ended in {seen.seconds:.0f} s")
        )
    torch = _installed_torch()
    if seen.status == RunStatus.TIMEOUT:
        return Observed(None, None, "", {"kind": "hangs"}, seen, torch)
    exception = (seen.exception or "").removeprefix("__main__.") or None
    message = next((ln.strip() for ln in (seen.message or "").splitlines() if ln.strip()), "")
    if seen.exit_code in (0, 77):
        last = (seen.stdout_tail.strip().splitlines() or [""])[-1]
        return Observed(seen.exit_code, None, last, None, seen, torch)
    if exception is None:
        return Observed(seen.exit_code, None, "", {"kind": "nonzero-exit"}, seen, torch)
    if exception.rsplit(".", 1)[-1] == "AssertionError":
        return Observed(seen.exit_code, exception, message, {"kind": "wrong-result"}, seen, torch)
    regex = message_regex(message)
    return Observed(
        seen.exit_code,
        exception,
        message,
        {"kind": "raises", "exception": exception, **({"match": regex} if regex else {})},
        seen,
        torch,
    )


def _installed_torch() -> str:
    """The torch of the interpreter that ran the script (this one), read from its metadata: nothing is imported."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return ""


def first_run(source: Path, text: str, oracle: dict | None, timeout: int | None, log) -> tuple[dict, Observed, Verdict]:
    """Run the script once (contained), propose the oracle when none was given, and judge the run as `run` would.
    A run that never reached the script's own code (torch not installed here) proposes nothing: it stops here."""
    seen = observe(source.resolve(), timeout or 300, log)
    if seen.observation is not None and (why := before_own_code(seen.observation, text, source.resolve().name)):
        raise EnvironmentProblem(
            f"--from {source}: {why}; that run says nothing about the bug: install what it imports "
            "here, or give the oracle (--raises/--match, --wrong-result, --hang, ...; to new-case with --no-run)"
        )
    if oracle is None and seen.oracle is not None:
        oracle = seen.oracle
        log(f"oracle from that run (case.yaml expect.repro): {oracle_yaml(oracle)}")
    elif oracle is not None and seen.oracle is not None and _plain(oracle) != _plain(seen.oracle):
        log(f"note: your oracle {oracle_yaml(oracle)} differs from what this run suggests: {oracle_yaml(seen.oracle)}")
    elif oracle is None:  # it did not fail here: the default is chosen, and said, since it makes the run a pass
        log(
            f"oracle: {oracle_yaml({'kind': 'nonzero-exit'})}, the default: the script exited {seen.exit_code} here, "
            "so this run suggests none; if the bug is in what it prints or computes, give --stdout/--stderr REGEX or "
            "--wrong-result (then new-case again)"
        )
    oracle = oracle or {"kind": "nonzero-exit"}
    verdict, why = judged(oracle, seen)
    log(f"ran {source.name} once on torch {seen.torch or '?'}: {verdict} ({why})")
    return oracle, seen, verdict


def oracle_yaml(oracle: dict) -> str:
    """An oracle as case.yaml writes it (YAML's flow style: a regex keeps its own backslashes, not Python's)."""
    return yaml.safe_dump(oracle, sort_keys=False, default_flow_style=True, width=10**6).strip()


def _plain(oracle: dict) -> dict:
    """An oracle as it reads: a regex's escapes of plain characters (`\\ ` for a space) and an exception's module
    path (the class is what matches) left out."""
    return {
        k: (re.sub(r"\\([^A-Za-z0-9])", r"\1", v) if k == "match" else v.rsplit(".", 1)[-1] if k == "exception" else v)
        for k, v in oracle.items()
    }
