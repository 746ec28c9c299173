"""The new-issue report `reprokit upstream ID` writes for a case that links no pytorch/pytorch issue.

It is written in the fields of PyTorch's torch.compile form, after the not-a-bug screens (not_a_bug.py), made of runs
on this machine now: the case's script made standalone (constants for REPRO_DEVICE / REPRO_DTYPE) and run contained
exactly as `reprokit run` runs a case (upstream_runs.py), again with TORCHDYNAMO_VERBOSE=1 when the error asks for it,
under TORCH_TRACE (then tlparse, when installed), with each ablation backend, under PyTorch's minifier where it
applies; `python -m torch.utils.collect_env`. Only the release history comes from the results store (upstream.py
reads it).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from reprokit.contrib import case_files
from reprokit.contrib.script_code import facts, torch_calls
from reprokit.model.corpus import CaseDir
from reprokit.model.records import RunStatus
from reprokit.model.schema import InputError
from reprokit.model.untrusted_text import plain
from reprokit.run import torch_envs
from reprokit.run.execute import Observation
from reprokit.tracker.drafting import issue_fields, minify, report_facts, trace_bundle
from reprokit.tracker.drafting.issue_fields import Failure
from reprokit.tracker.drafting.pt2_report import Evidence, render
from reprokit.tracker.issue import issue_search
from reprokit.tracker.judging import not_a_bug, upstream_runs
from reprokit.tracker.text.release_summary import ReleaseHistory
from reprokit.tracker.text.traceback_text import raised_at
from reprokit.tracker.text.user_paths import as_user_sees

MINIFY_TIMEOUT = 600


@dataclass(frozen=True)
class Filed:
    """What `upstream` made: the draft, what to attach, the commands to run (in order), notes for the user."""

    report: Path
    attachments: list[Path]
    commands: list[tuple[str, str]]  # (what it is for, the command or link)
    notes: list[str]
    title: str | None = None


def issue_search_title(title: str) -> str:
    return " ".join(plain(title).split())[:120]


def _refuse(case_id: str, why: str) -> InputError:
    return InputError(f"cases/{case_id}: not filed: {why}; --force writes the report anyway")


def _plain(cd: CaseDir, setting: upstream_runs.Setting, folder: Path, force: bool) -> tuple[Path, Observation]:
    """The standalone script and its contained plain run; refused when it does not fail here."""
    script = upstream_runs.write_standalone(case_files.read_text(cd.path, "repro.py"), setting, folder)
    plain = upstream_runs.contained(setting, script)
    if plain.status == RunStatus.PASS and not force:
        raise _refuse(cd.case.id, "`python repro.py` exited 0 on this machine: the bug does not reproduce here")
    if plain.exit_code == 77 and not force:
        last = (plain.stdout_tail.strip().splitlines() or ["no reason printed"])[-1]
        raise _refuse(cd.case.id, f"the script skips itself here (exit 77): {last}")
    return script, plain


def _minified(cd: CaseDir, setting, script: Path, failure: Failure, script_text: str) -> tuple[str | None, str]:
    """The minified repro when smaller than the script, and the sentence that says what the minifier did."""
    kept = case_files.read_optional(cd.path, "minified_repro.py")
    if kept is not None:
        found = minify.Minified(kept, "kept beside the case (minified_repro.py)")
    else:
        level = minify.level_for(failure.obs, failure.obs.stage, failure.own_check and failure.compiles)
        if level is None or not failure.compiles:
            return None, (
                f"Minified repro: none; PyTorch's minifier replays backend (inductor) compile and accuracy "
                f"failures, and this one is raised in {failure.component}."
            )
        found = minify.run_minifier(
            script,
            {"REPRO_DEVICE": setting.device, "REPRO_DTYPE": setting.dtype},
            level,
            min(MINIFY_TIMEOUT, 3 * setting.timeout),
            setting.python,
        )
    if found.text is None:
        return None, f"Minified repro: none; {found.why}."
    mine, theirs = len(script_text.splitlines()), len(found.text.splitlines())
    if theirs >= mine:
        return None, (
            f"Minified repro: not attached; PyTorch's minifier ({found.why}) wrote {theirs} lines, not "
            f"fewer than the script's {mine}."
        )
    return found.text, f"The minifier's repro has {theirs} lines against the script's {mine} ({found.why})."


def _failure(plain: Observation, raised, text: str, ladder) -> Failure:
    code = facts(text)
    own = raised.raised_by_script(plain.exception) and plain.exception == "AssertionError"
    return Failure(
        plain,
        own,
        issue_fields.component(plain.stage, ladder),
        code.compiles,
        any(c.startswith("torch.export") for c in torch_calls(text)),
    )


def torch_version(versions: str) -> str:
    return next((ln.split(":", 1)[1].strip() for ln in versions.splitlines() if ln.startswith("PyTorch version:")), "?")


def new_issue(
    cd: CaseDir,
    target: str,
    setting: upstream_runs.Setting,
    history: ReleaseHistory,
    out: Path,
    *,
    force: bool = False,
    tlparse: str | None = None,
    search_json: Path | None = None,
) -> Filed:
    """Long: one report's runs in order, each deciding whether the next is needed (screens, ablation, minifier).

    history: this case's repro on `target` from recorded runs, oldest first, with what each release raised."""
    case_id, notes = cd.case.id, []
    workdir = Path(tempfile.mkdtemp(prefix="reprokit-upstream-"))
    try:
        script, plain = _plain(cd, setting, workdir / "script", force)
        text = script.read_text(encoding="utf-8")
        ours = (cd.path.resolve(), cd.path.resolve().parent.parent, torch_envs.cache_root())
        error_log = as_user_sees(plain.stderr_tail, script, ours)
        stdout = as_user_sees(plain.stdout_tail, script, ours)
        raised = raised_at(error_log, "repro.py")
        screened = not_a_bug.screen(
            cd.case, plain, stdout + "\n" + error_log, raised, facts(text).compiles, setting.python
        )
        if screened and not force:
            raise _refuse(case_id, screened.line())
        if screened:
            notes.append(f"warning: written with --force over the {screened.screen} screen: {screened.reason}")
        if (usage := not_a_bug.ordinary_use(text, case_files.read_optional(cd.path, "fixed.py"))) and not force:
            raise _refuse(case_id, usage.line())
        ladder = upstream_runs.ablation(setting, script) if facts(text).compiles else None
        failure = _failure(plain, raised, text, ladder)
        key = re.sub(r"['\"]", "", issue_fields.search_key(failure, torch_calls(text)))[:200]
        found = report_facts.searched(failure, key, search_json)
        if (dupes := report_facts.duplicates(failure, found)) and not force:
            raise _refuse(
                case_id,
                "an open issue already reports this failure: "
                + "; ".join(f"#{d.number} ({issue_search_title(d.title)})" for d in dupes[:3])
                + " (found by the duplicate "
                "search the report lists); comment there instead",
            )
        verbose = None
        if "TORCHDYNAMO_VERBOSE=1" in error_log:
            verbose = as_user_sees(upstream_runs.verbose(setting, script).stderr_tail, script, ours)
        out.mkdir(parents=True, exist_ok=True)
        upstream_runs.traced(setting, script, workdir / "trace")
        attachments, trace_note = trace_bundle.bundle(workdir / "trace", out, case_id, tlparse)
        minified, minified_note = _minified(cd, setting, script, failure, text)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    versions = upstream_runs.collect_env(setting.python)
    labels = issue_fields.labels(failure, cd.case.area, cd.case.category)
    if history.regression():
        labels.append(report_facts.REGRESSION_LABEL)
    ev = Evidence(
        failure=failure,
        script=text,
        error_log=error_log,
        stdout=stdout,
        device=setting.device,
        torch_version=torch_version(versions),
        target=target,
        history=history,
        ladder=ladder,
        verbose_log=verbose,
        minified=minified,
        minified_note=minified_note,
        trace_note=trace_note,
        versions=versions,
        labels=labels,
        overridden=screened,
        expected=report_facts.expected(failure, history, text),
        workaround=report_facts.workaround(cd, setting.device, setting.dtype),
        related=issue_search.related([], searched=found),
    )
    report = out / f"{case_id}.md"
    report.write_text(render(ev), encoding="utf-8")
    if tlparse is None:
        notes.append(
            f"tlparse is not installed, the report attaches the raw trace only; install it: "
            f"{trace_bundle.INSTALL_TLPARSE}"
        )
    title = report_facts.regression_title(issue_fields.title(failure), history)
    steps = [
        ("search for duplicates first (torch's own exception text):", issue_fields.search_command(key)),
        (
            "then file it through PyTorch's torch.compile form (title filled in; paste each section of the draft "
            "into the field of the same name, attach the files; labels a non-member gives on the command line are "
            "dropped, the form labels it):",
            issue_fields.form_link(title),
        ),
    ]
    return Filed(report=report, attachments=attachments, title=title, notes=notes, commands=steps)
