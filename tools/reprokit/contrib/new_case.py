"""Scaffold a case folder, or turn a standalone repro script (as posted in an issue) into a case."""

from __future__ import annotations

import datetime
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import yaml

from reprokit.contrib import observed_failure, seeding, validate
from reprokit.contrib.case_templates import FIXED_TEMPLATE, REPRO_TEMPLATE, YAML_HEADER
from reprokit.contrib.first_failure import before_own_code
from reprokit.contrib.observed_failure import AREA_CATEGORY
from reprokit.contrib.script_code import docstring_title, facts, read_script
from reprokit.model.case import Oracle, load_case
from reprokit.model.records import RunStatus
from reprokit.model.schema import CATEGORIES, ISSUE_URL, CaseId, EnvironmentProblem, InputError, conforms
from reprokit.model.verdict import Verdict
from reprokit.run import execute
from reprokit.run.child_setup import write_readable_script
from reprokit.run.outcome import repro_verdict
from reprokit.run.scheduler import CONFIRM_FACTOR


def oracle_from_flags(
    raises: str | None,
    match: str | None,
    stdout: str | None,
    stderr: str | None,
    hang: bool,
    wrong_result: bool = False,
    nonzero_exit: bool = False,
) -> dict | None:
    """The oracle the flags give; None when no flag gives one (new-case then proposes one from a run)."""
    chosen = [
        flag
        for flag, on in (
            ("--raises", raises),
            ("--stdout", stdout),
            ("--stderr", stderr),
            ("--hang", hang),
            ("--wrong-result", wrong_result),
            ("--nonzero-exit", nonzero_exit),
        )
        if on
    ]
    if len(chosen) > 1:
        raise InputError(f"{' and '.join(chosen)}: give one oracle (what 'the bug reproduces' means)")
    if raises:
        return {"kind": "raises", "exception": raises, **({"match": match} if match else {})}
    if match:  # any exception class whose message matches (the class differs across releases)
        return {"kind": "raises", "match": match}
    if stdout:
        return {"kind": "stdout", "match": stdout}
    if stderr:
        return {"kind": "stderr", "match": stderr}
    if hang:
        return {"kind": "hangs"}
    if wrong_result:
        return {"kind": "wrong-result"}
    if nonzero_exit:
        return {"kind": "nonzero-exit"}
    return None


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


def infer_requires(text: str) -> dict:
    """Devices, launcher, ranks and dtypes as the script's code uses them (script_code.py: its syntax tree, so a
    comment or a docstring saying "cuda" changes nothing): REPRO_DEVICE means any device, a hard-coded "cuda"
    device or a .cuda() call means CUDA, a torchrun program gets launcher and world_size."""
    return facts(text).requires()


@dataclass(frozen=True)
class Provenance:
    """Where an upstream case comes from, from the issue page (all optional for article cases)."""

    source: str | None = None  # article | sweep | upstream; None: upstream when a link is a pytorch issue
    reported_on: str | None = None
    issue_state: str | None = None
    area: str | None = None
    requires_torch: str | None = None
    notes: str | None = None
    devices: tuple[str, ...] = ()  # overrides what infer_requires reads from the script

    def fields(self, links: list[str]) -> dict:
        source = self.source or ("upstream" if any(ISSUE_URL.match(link) for link in links) else None)
        out: dict = {}
        if self.notes:
            out["notes"] = self.notes
        if source:
            out["source"] = source
        reported_on, issue_state = self.reported_on, self.issue_state
        if source == "upstream":  # what the issue page does not say is recorded as unknown, never guessed
            reported_on, issue_state = reported_on or "unknown", issue_state or "unknown"
        for key, value in (("reported_on", reported_on), ("issue_state", issue_state), ("area", self.area)):
            if value:
                out[key] = value
        if self.issue_state:  # read from the page today
            out["issue_checked"] = datetime.date.today().isoformat()
        return out


def _first_run(
    source: Path, text: str, oracle: dict | None, timeout: int | None, log
) -> tuple[dict, Observed, Verdict]:
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


def _requires(text: str | None, provenance: Provenance, timeout: int | None) -> dict:
    """case.yaml `requires` from the script's code: a script that reads REPRO_DTYPE is parameterised over the
    target's dtypes; one that fixes its own dtype (float64) declares it, so that its runs are recorded in the dtype
    they compute in, not in the target's first."""
    if text is None:
        return {"devices": ["cpu", "cuda"]}
    requires = infer_requires(text)
    if provenance.devices:
        requires["devices"] = list(provenance.devices)
    if provenance.requires_torch:
        requires["torch"] = provenance.requires_torch
    if timeout:
        requires["timeout"] = timeout
    return requires


def create(
    cases_dir: Path,
    case_id: str,
    *,
    source: Path | None,
    title: str | None,
    category: str | None,
    links: list[str],
    oracle: dict | None,
    timeout: int | None,
    fixed: Path | None = None,
    provenance: Provenance = Provenance(),
    observe_run: bool = True,
    log=print,
) -> Path:
    """Make cases/ID. With --from, the script runs once (contained): without an oracle flag its failure proposes the
    oracle; either way that run is judged as `run` judges it, and names the title and category when not given. A
    script that draws random data with no seed is seeded before that run (seeding.py) where the oracle is wrong-result
    or is the run's to propose, and says so; repro.py is the script that ran, otherwise the script as given."""
    if not conforms(CaseId, case_id):
        raise InputError(f"ID {case_id!r}: lowercase letters, digits and '-' only, e.g. dynamic-shape-my-bug")
    folder = cases_dir / case_id
    if folder.exists():
        raise InputError(f"{folder}: already exists; pick another ID or edit that case")
    for flag, path in (("--from", source), ("--fixed", fixed)):
        if path is not None and not path.is_file():
            raise InputError(f"{flag} {path}: no such file")
    text = read_script(source) if source else None  # bounded: size, encoding and syntax tree checked first
    extra = provenance.fields(links)
    requires = _requires(text, provenance, timeout)
    title = title or (docstring_title(text) if text else None)
    stage, seeded = None, None
    runs = source is not None and observe_run and requires.get("devices") != ["cuda"]
    try:  # a seeded copy lives in a temporary folder until the case holds it
        # Seeded before its one run where the oracle is wrong-result or is the run's to propose (it may propose
        # wrong-result): the script that runs is the script the case holds, and it runs once.
        if source is not None and text and (oracle["kind"] == "wrong-result" if oracle else runs):
            seeded = seeding.seeded_copy(source, text, log)
            source, text = seeded or (source, text)
        if runs:
            assert source is not None  # `runs` says so
            oracle, seen, verdict = _first_run(source, text or "", oracle, timeout, log)
            stage = observed_failure.failing_stage(seen.observation)
            api = observed_failure.failing_api(seen.observation, text or "", source.resolve().name)
            title = title or observed_failure.title(
                oracle["kind"],
                verdict is Verdict.REPRODUCES,
                seen.observation,
                seen.exception,
                seen.message,
                api,
                stage,
                source.stem,
            )
            category = (
                category
                or AREA_CATEGORY.get(provenance.area or "")
                or observed_failure.category(
                    stage, api, text or "", observed_failure.said(seen.observation, seen.message)
                )
            )
        title = title or (f"{source.stem}: not run here yet" if source else f"TODO: describe {case_id}")
        category = category or AREA_CATEGORY.get(provenance.area or "") or "diagnosis"
        data = {
            "id": case_id,
            "title": title,
            "category": category,
            "requires": requires,
            "expect": {"repro": oracle or {"kind": "nonzero-exit"}},
            "links": links,
            **extra,
        }
        _write(folder, data, source, fixed, title)
    finally:
        if seeded:
            shutil.rmtree(seeded[0].parent)
    return folder


def _write(folder: Path, data: dict, source: Path | None, fixed: Path | None, title: str) -> None:
    folder.mkdir(parents=True)
    try:
        text = YAML_HEADER.format(categories=", ".join(CATEGORIES)) + yaml.safe_dump(data, sort_keys=False, width=120)
        (folder / "case.yaml").write_text(text, encoding="utf-8")
        if source is not None:
            shutil.copyfile(source, folder / "repro.py")  # byte for byte what ran (the script, or its seeded copy)
            if fixed is not None:
                shutil.copyfile(fixed, folder / "fixed.py")
        else:
            (folder / "repro.py").write_text(REPRO_TEMPLATE.format(title=title), encoding="utf-8")
            (folder / "fixed.py").write_text(FIXED_TEMPLATE.format(id=data["id"]), encoding="utf-8")
        case = load_case(folder / "case.yaml")
        if problems := validate.case_problems(folder / "case.yaml", case, []):  # what `validate` would refuse
            problem = problems[0].replace(str(folder / "repro.py"), str(source)) if source else problems[0]
            raise InputError(f"{problem}; not created (fix the script or the flags, then new-case again)")
    except InputError:
        shutil.rmtree(folder)
        raise
