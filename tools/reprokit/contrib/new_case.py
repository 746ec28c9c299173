"""Scaffold a case folder, or turn a standalone repro script (as posted in an issue) into a case (its one run there,
the oracle it proposes and the verdict it gets: first_run.py)."""

from __future__ import annotations

import datetime
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from reprokit.contrib import observed_failure, seeding, validate
from reprokit.contrib.case_templates import FIXED_TEMPLATE, REPRO_TEMPLATE, YAML_HEADER
from reprokit.contrib.first_run import first_run
from reprokit.contrib.observed_failure import AREA_CATEGORY
from reprokit.contrib.script_code import docstring_title, facts, read_script
from reprokit.model.case import load_case
from reprokit.model.schema import CATEGORIES, ISSUE_URL, CaseId, InputError, conforms
from reprokit.model.verdict import Verdict


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
            oracle, seen, verdict = first_run(source, text or "", oracle, timeout, log)
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
