"""Whether a record recorded elsewhere says what its own observation says: `import` re-judges each record of a case
from the facts it carries (status, exit code, signal, exception, message, output tails) against the case's oracle,
as the run judged it (outcome.py), and refuses one whose verdict does not follow (a forged "does-not-reproduce" that
carries the case's real content hash and the observation of a run that reproduced)."""

from __future__ import annotations

import re
from pathlib import Path

from reprokit.model.case import load_case
from reprokit.model.corpus import FIX_VARIANTS
from reprokit.model.records import Record, RunStatus
from reprokit.model.schema import InputError
from reprokit.model.verdict import Verdict
from reprokit.run.execute import Observation
from reprokit.run.outcome import fix_verdict, repro_verdict


def observation_of(rec: Record) -> Observation:
    """The observation a record keeps, as the run judged it (a record with a status: refusal asks only of those)."""
    message = rec.message or ""
    assert rec.status is not None  # refusal returned before for a record without one
    return Observation(
        status=rec.status,
        exit_code=rec.exit_code,
        signal=rec.signal,
        seconds=rec.seconds,
        exception=rec.exception,
        message=rec.message,
        stage=rec.stage,
        dynamo=rec.dynamo,
        stdout_tail=rec.stdout_tail,
        stderr_tail=rec.stderr_tail,
        contained=rec.contained,
        malformed=message.removeprefix("malformed observation: ")
        if rec.status == RunStatus.CRASH and message.startswith("malformed observation: ")
        else None,
        over_budget=_over(rec),
        probes=[{"exception": rec.exception, "chain": _chain(rec)}],
    )


def _chain(rec: Record) -> list[str]:
    """The exception chain a record does not keep, as its traceback in the stderr tail shows it (`Name: message`
    lines; "The above exception was the direct cause of the following exception")."""
    names = re.findall(
        r"^([A-Za-z_][\w.]*(?:Error|Exception|Failed|Unsupported|Exit|Interrupt)): ", rec.stderr_tail, re.MULTILINE
    )
    return [n for n in [rec.exception, *names] if n]


def _over(rec: Record) -> str | None:
    if rec.status != RunStatus.OVER_BUDGET:
        return None
    return rec.why.removeprefix("over its ").removesuffix(" budget") or "a"


def refusal(rec: Record, case_yaml: str | None) -> str | None:
    """Why the record's verdict does not follow from its observation under `case_yaml` (the case.yaml of the version
    it ran), or None where it does (or where there is no observation to judge: a sweep record, a record of the time
    before observations were kept)."""
    if rec.suite != "cases" or rec.status is None:
        return None
    if case_yaml is None:
        return f"the case.yaml of cases/{rec.case}/ at {rec.case_hash} cannot be read: its verdict cannot be re-judged"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="reprokit-rejudge-") as tmp:
        folder = Path(tmp) / rec.case
        folder.mkdir()
        (folder / "case.yaml").write_text(case_yaml, encoding="utf-8")
        try:
            case = load_case(folder / "case.yaml")
        except (InputError, OSError, ValueError):
            return (
                f"the case.yaml of cases/{rec.case}/ at {rec.case_hash} is not valid: its verdict cannot be re-judged"
            )
    judge = fix_verdict if rec.variant in FIX_VARIANTS else repro_verdict
    judged, why = judge(case.expect_for(rec.target).repro, observation_of(rec))
    if rec.verdict == Verdict.FLAKY:
        runs, failed = (rec.repeats or {}).get("runs", 0), (rec.repeats or {}).get("failed", -1)
        return None if 0 < failed < runs else "flaky without runs that disagree (repeats)"
    if judged != rec.verdict:
        return (
            f"verdict {rec.verdict.value} does not follow from its observation, which is judged {judged.value} ({why})"
        )
    return None


def import_sources(store, sources: list[str], root: Path, say=print, warn=print) -> list[str]:
    """`reprokit import`: each source (a path as given, which the lines repeat) merged into `store` in turn, its records re-judged (refusal): warn gets each
    refused record, say what each source gave. Returns the refusals of the last source, which the command's exit
    status has always read."""
    from reprokit.store import importer

    refused: list[str] = []
    for source in sources:
        records, runs, refused = importer.import_into(store, Path(source), root, judge=refusal)
        for line in refused:
            warn(line)
        say(f"imported {records} records of {runs} run(s) from {source} into {store.folder}")
    return refused
