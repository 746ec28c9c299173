"""The run lifecycle, in one place: plan -> skip what is recorded -> schedule -> journal -> merge into the store ->
compare with the expected state -> render. Testable without the CLI: `run(RunRequest(...))`.

Host or container is decided here only (`placement`); a container run gets the whole request, as JSON.
SIGINT/SIGTERM start nothing new, kill the runs in flight, keep and merge every finished record and say so.
"""

from __future__ import annotations

import os
import time
from importlib import metadata
from pathlib import Path
from typing import Literal

from reprokit.images import container
from reprokit.model.matrix import Matrix, Target
from reprokit.model.records import Record
from reprokit.model.schema import EnvironmentProblem, InputError
from reprokit.publish import render
from reprokit.publish.pages import run_summary
from reprokit.run.container_run import run_in_container
from reprokit.run.host_run import run_here
from reprokit.run.plan import check_selection
from reprokit.run.request import RunOutcome, RunRequest, load_root_matrix, shown_path, target_of
from reprokit.store import expected, machines
from reprokit.store.machines import release_of
from reprokit.store.store import Loaded, Store
from reprokit.store.views import current


def run(req: RunRequest, log=print, summary: bool = True, gate_lines: bool = True) -> RunOutcome:
    """One run; it ends with its summary (run_summary.py) unless summary=False (a container's inner run);
    gate_lines=False: the comparison with the expected state is made but not printed (a bisection's inner run)."""
    started = time.monotonic()
    matrix = load_root_matrix(req.root)
    target = target_of(matrix, req.target)
    if placement(req) == "container":
        ran = run_in_container(req, target, log)
    else:
        if req.where == "auto":
            log("Docker is not running here: running in this Python environment (--host)")
        ran = run_here(req, target, log)
    outcome = ran.outcome
    if ran.settle:
        if req.render:
            outcome.written = render_reports(
                req.root, req.reports_dir, matrix, Store(req.store_dir), {(req.target, req.suite): ran.loaded}
            )
            for path in outcome.written:
                log(f"wrote {shown_path(path, req.root)}")
            if not outcome.written:
                log(f"reports: none changed ({shown_path(req.reports_dir, req.root)} already shows these records)")
        _gate(outcome, req, target, ran.recorded, ran.mismatch, log if gate_lines else lambda line: None)
    if summary:
        page = f"{req.target}.md" if req.suite == "cases" else f"{req.target}-{req.suite}.md"
        if req.suite == "cases" and _history_only(outcome, ran.loaded, req, target):
            page = f"{req.target}-history.md"  # the target's page shows its pinned release; this one is history
        report = req.reports_dir / page if req.render and (req.reports_dir / page).exists() else None
        for line in run_summary.lines(
            req.target,
            outcome.records,
            outcome.gate,
            time.monotonic() - started,
            outcome.not_started,
            outcome.interrupted,
            shown_path(report, req.root) if report else None,
        ):
            log(line)
    return outcome


def refused_before_running(req: RunRequest) -> None:
    """What `reprokit run` refuses before anything is collected, built or run (exit 2): a --case that names no case,
    --update-expected where the torch to run is known not to be the target's pin (the run would accept nothing)."""
    check_selection(req)
    if not req.update_expected:
        return
    target = target_of(load_root_matrix(req.root), req.target)
    if why := off_pin(req, target, placement(req)):
        raise InputError(
            f"--update-expected: {why}; nothing could be accepted: "
            f"{expected.pin_command(req.target, req.suite, target.pins.torch, req.cases, req.out)}"
        )


def off_pin(req: RunRequest, target: Target, where: str) -> str:
    """Why the run's torch is known before it starts not to be the target's pin ("" where it is, or cannot be told
    before the run: an interpreter given by path, whose torch its run reads)."""
    pin = target.pins.torch
    if req.torch is not None and os.sep not in req.torch:
        release = req.torch
    elif req.torch is None and req.python is None and where == "host":
        try:
            release = metadata.version("torch")
        except metadata.PackageNotFoundError:
            return ""  # the run itself says torch is missing
    else:
        return ""
    if release_of(release) == release_of(pin):
        return ""
    return f"torch {release} would run, not {req.target}'s pin {pin}"


def _history_only(outcome: RunOutcome, loaded: Loaded, req: RunRequest, target: Target) -> bool:
    """The run's records are of another release than the one the target's page shows (its pin's, where recorded)."""
    if outcome.gate is None or outcome.gate.gated:
        return False
    view = current(loaded, req.target, req.suite, target.pins.torch)
    return view is None or view.release != outcome.gate.release


def placement(req: RunRequest) -> Literal["host", "container"]:
    """Where cases run: container mode where a Docker engine answers (or when asked), else this environment."""
    if req.where == "auto":
        return "container" if container.docker_running() else "host"
    if req.where == "container" and not container.docker_running():  # CI asks for it: never fall back to the host
        raise EnvironmentProblem(
            "--container: no Docker engine answers here (start it, or run --host for cases you have read)"
        )
    return req.where


def _gate(
    outcome: RunOutcome, req: RunRequest, target: Target, recorded: list[Record], mismatch: str | None, log
) -> None:
    """Compare with the expected state, unless the run was forced onto other hardware (its verdicts are not the
    target's)."""
    if mismatch:
        log(f"not compared with the expected state: {mismatch} (--force)")
        return
    loaded = Store(req.store_dir).load(req.target, req.suite, outputs=False)
    header = next((loaded.runs.get(r.run_id) for r in recorded if r.run_id in loaded.runs), None)
    here = machines.cpu_model(header.environment) if header is not None else ""
    known = machines.machine_dependent(loaded.records, loaded.runs, header.run_id if header is not None else None)
    outcome.gate = expected.check(
        req.root, req.target, req.suite, target.pins.torch, recorded, req.update_expected, here, known
    )
    for line in expected.describe(outcome.gate, req.root, req.target, req.suite, req.torch, req.out):
        log(line)


def run_request_json(text: str) -> RunOutcome:
    """The container's entry point: the whole request, as JSON."""
    try:
        req = RunRequest.model_validate_json(text)
    except ValueError as err:
        raise InputError(f"run request: {str(err).splitlines()[0]}") from None
    return run(req, summary=False)


def render_reports(
    root: Path, reports_dir: Path, matrix: Matrix, store: Store, in_memory: dict[tuple[str, str], Loaded] | None = None
) -> list[Path]:
    """Every report, from the store; the target just run comes from memory, not read back from disk. Output tails
    are read only for the records the pages show (render.gather)."""
    in_memory = in_memory or {}
    loaded = Loaded()
    for name in matrix.targets:
        for suite in ("cases", "sweep"):
            loaded.add(in_memory.get((name, suite)) or store.load(name, suite, outputs=False))
    return render.write_all(root, reports_dir, matrix, loaded)
