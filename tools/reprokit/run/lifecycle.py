"""The run lifecycle, in one place: plan -> skip what is recorded -> schedule -> journal -> merge into the store ->
compare with the expected state -> render. Testable without the CLI: `run(RunRequest(...))`.

Host or container is decided here only (`placement`); a container run gets the whole request, as JSON.
SIGINT/SIGTERM start nothing new, kill the runs in flight, keep and merge every finished record and say so.
"""

from __future__ import annotations

import fnmatch
import os
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from reprokit import __version__
from reprokit.images import container, dockerfiles
from reprokit.model import corpus
from reprokit.model.matrix import Matrix, Target, load_matrix
from reprokit.model.records import Record, RunHeader, Sitting
from reprokit.model.schema import InputError
from reprokit.model.untrusted_text import one_line
from reprokit.publish import render, run_facts, run_summary
from reprokit.run import devices, environment, sweep, torch_envs
from reprokit.run.process_groups import Stopper
from reprokit.run.scheduler import Identity, RunOptions, longest_first, now_iso, run_all
from reprokit.run.warm import WarmPool
from reprokit.store import expected
from reprokit.store.store import Loaded, Store, merge_in_memory

Suite = Literal["cases", "sweep"]


class RunRequest(BaseModel):
    """Every option of one `reprokit run`, merged once; a container run receives it whole."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    root: Path
    target: str
    suite: Suite = "cases"
    cases: list[str] = []
    smoke: bool = False
    shard: str | None = None
    jobs: int = os.cpu_count() or 1
    jobs_per_gpu: int | None = None  # runs at once on one accelerator; None: no cap beyond jobs (devices.py)
    timeout: float | None = None
    out: Path | None = None  # results store and reports under out/results and out/reports instead of the root's
    cache: Path | None = None
    resume: bool = False
    update_expected: bool = False
    where: Literal["auto", "host", "container"] = "auto"
    base_image: str | None = None
    base_python: str | None = None  # the Python (X.Y) of --base-image, when it is not matrix.yaml's python
    wheelhouse: Path | None = None
    force: bool = False
    deadline: float | None = None
    warm: bool = False
    render: bool = True
    ladder: bool = True
    python: str | None = None  # the interpreter that runs the cases (needs torch); None: this one
    torch: str | None = None  # run this torch release in its own environment (torch_envs.py); "nightly" too
    skip_recorded: bool = False  # skip runs recorded for this torch with the same case content (the history)
    torch_index: str | None = None  # the index --torch installs from (e.g. the nightly index); None: the target's

    @property
    def interpreter(self) -> str:
        return self.python or sys.executable

    @property
    def store_dir(self) -> Path:
        return (self.out or self.root) / "results"

    @property
    def reports_dir(self) -> Path:
        return self.out / "reports" if self.out else self.root / "reports"


@dataclass
class RunOutcome:
    records: list[Record] = field(default_factory=list)  # what this invocation recorded
    interrupted: bool = False
    not_started: int = 0
    gate: expected.Gate | None = None
    written: list[Path] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if self.gate is not None and self.gate.failed else 0


def placement(req: RunRequest) -> Literal["host", "container"]:
    """Where cases run: container mode where a Docker engine answers (or when asked), else this environment."""
    if req.where == "auto":
        return "container" if container.docker_running() else "host"
    if req.where == "container" and not container.docker_running():  # CI asks for it: never fall back to the host
        raise InputError("--container: no Docker engine answers here (start it, or run --host for cases you have read)")
    return req.where


def target_of(matrix: Matrix, name: str) -> Target:
    if name not in matrix.targets:
        raise InputError(f"--target {name!r}: unknown target; matrix.yaml has {', '.join(matrix.targets)}")
    return matrix.targets[name]


def load_root_matrix(root: Path) -> Matrix:
    if not (root / "matrix.yaml").exists():
        raise InputError(f"{root}: no matrix.yaml here (run from the repository root or pass --root)")
    return load_matrix(root / "matrix.yaml")


def run(req: RunRequest, log=print, summary: bool = True) -> RunOutcome:
    """One run; it ends with its summary (run_summary.py) unless summary=False (a container's inner run)."""
    started = time.monotonic()
    matrix = load_root_matrix(req.root)
    target = target_of(matrix, req.target)
    where = placement(req)
    if where == "container":
        outcome = _run_in_container(req, matrix, target, log)
    else:
        if req.where == "auto":
            log("Docker is not running here: running in this Python environment (--host)")
        outcome = _run_here(req, matrix, target, log)
    if summary:
        page = f"{req.target}.md" if req.suite == "cases" else f"{req.target}-{req.suite}.md"
        report = next((p for p in outcome.written if p.name == page), None)
        for line in run_summary.lines(req.target, outcome.records, outcome.gate, time.monotonic() - started,
                                      outcome.not_started, outcome.interrupted,
                                      _rel(report, req.root) if report else None):
            log(line)
    return outcome


# ---------------------------------------------------------------- host

def plan(req: RunRequest, target: Target, facts: dict) -> list[corpus.CaseRun]:
    if req.suite == "sweep":
        runs = sweep.plan(req.root / "sweep", req.target, target, facts, smoke=req.smoke)
        chosen = {c for c in {r.case.id for r in runs}
                  if not req.cases or any(fnmatch.fnmatchcase(c, g) for g in req.cases)}
        if req.cases and not chosen:
            raise InputError(f"--case {req.cases[0]!r}: no sweep structure matches (ids are sweep-<model>)")
        runs = [r for r in runs if r.case.id in chosen]
    else:
        found = corpus.discover(req.root / "cases", on_error=lambda message: print(message, file=sys.stderr))
        runs = corpus.plan(corpus.select(found, req.cases), req.target, target, facts)
    return corpus.shard(runs, req.shard)


def _resumable(loaded: Loaded, req: RunRequest, torch: str, device: str) -> RunHeader | None:
    """The latest run of this target, suite, torch and device: the one --resume continues."""
    mine = [h for h in loaded.runs.values()
            if (h.target, h.suite, h.torch, h.device) == (req.target, req.suite, torch, device)]
    return max(mine, key=lambda h: h.finished) if mine else None


def _run_here(req: RunRequest, matrix: Matrix, target: Target, log) -> RunOutcome:
    store = Store(req.store_dir)
    for found in store.recover(req.target):
        log(f"recovered {len(found.records)} finished records of a killed run from {found.path.name}"
            + (f"; ended {len(found.ended_pids)} processes it left" if found.ended_pids else ""))
    if req.cache:
        req.cache.mkdir(parents=True, exist_ok=True)
    setup = 0.0
    if req.torch:
        index = req.torch_index or (target.pins.index_url if target.family != "cpu" else None)
        built = torch_envs.ensure(req.torch, index, req.wheelhouse, log=log)
        req, setup = req.model_copy(update={"python": str(built.python)}), built.setup_seconds
    facts = environment.collect(req.interpreter)
    mismatch = environment.hardware_mismatch(req.target, target, facts)
    if mismatch and not req.force:
        raise InputError(f"{mismatch}; pass --force to run anyway")
    kind = corpus.run_kind(target, facts)
    if kind != target.device.kind:
        log(f"no {target.device.kind} device here (--force): cases that run on a CPU run on it, the rest are skipped")
    ids = devices.host_devices(kind, facts.get("device_count") or 0, os.environ)
    per_device = devices.jobs_per_device(req.jobs, req.jobs_per_gpu)
    torch, device = facts["torch"], facts.get("device_name") or "cpu"
    runs = plan(req, target, facts)
    loaded = store.load(req.target, req.suite)
    previous = _resumable(loaded, req, torch, device) if req.resume else None
    run_id = previous.run_id if previous else f"{now_iso().replace(':', '').replace('-', '')}-{uuid.uuid4().hex[:8]}"
    done = {r.key for r in loaded.records if r.run_id == run_id}
    if req.skip_recorded:  # the history: what this torch already ran with the same case content is not run again
        content = {r.key: r.content for r in runs}
        done |= {r.key for r in loaded.records if (r.torch, r.device) == (torch, device) and r.case_hash
                 and r.case_hash == content.get(r.key)}
    todo = [r for r in runs if r.key not in done]
    # Each run's last recorded time: this torch's, else the latest under another torch (a new release's first run).
    by_age = sorted(loaded.records, key=lambda r: (r.torch == torch, r.recorded_at))
    todo = longest_first(todo, {r.key: r.seconds for r in by_age})
    placed = devices.describe(kind, ids, per_device)
    log(f"{req.target}: {len(runs)} runs ({len(runs) - len(todo)} already recorded), {req.jobs} jobs"
        + (f" on {placed}" if placed else "") + f", on {run_facts.machine_text(facts)}")

    sitting = Sitting(jobs=req.jobs, started=now_iso(), on=run_facts.machine_text(facts), ended="running",
                      env_setup_seconds=setup, devices=list(ids), jobs_per_device=per_device if ids else None)
    header = RunHeader(
        run_id=run_id, target=req.target, suite=req.suite, torch=torch, device=device, environment=facts,
        mode="host", cache=f"warm ({req.cache})" if req.cache else "cold",
        interpreter="warm (forked from a zygote)" if req.warm else "cold", selection=req.cases, shard=req.shard,
        smoke=req.smoke, planned=previous.planned if previous else len(runs), not_started=len(todo),
        sittings=[*(previous.sittings if previous else []), sitting], reprokit=__version__)
    token = uuid.uuid4().hex
    stopper = Stopper(token)
    journal = store.open_journal(header, token)
    outcome = RunOutcome()
    started = time.monotonic()
    with _stop_on_signals(stopper, log):
        pool = WarmPool(req.interpreter, token) if req.warm else None
        try:
            opts = RunOptions(device_kind=kind, jobs=req.jobs, timeout=req.timeout, python=req.interpreter,
                              ladder=req.ladder, deadline=started + req.deadline if req.deadline else None, warm=pool,
                              cache_dir=req.cache.resolve() if req.cache else None, stopper=stopper,
                              devices=ids, jobs_per_device=per_device)
            progress = _progress(len(todo), log)

            def on_done(record: Record) -> None:
                journal.append(record)
                progress(record)

            outcome.records = run_all(todo, Identity(req.target, req.suite, torch, device, run_id), opts, on_done)
        finally:
            if pool is not None:
                pool.close()
    outcome.interrupted = stopper.stopped
    outcome.not_started = len(todo) - len(outcome.records)
    ended = "interrupted" if outcome.interrupted else ("deadline" if outcome.not_started else "finished")
    header = header.model_copy(update={
        "not_started": outcome.not_started,
        "sittings": [*header.sittings[:-1], sitting.model_copy(update={
            "finished": now_iso(), "wall_seconds": round(time.monotonic() - started, 1), "ended": ended})]})
    files = store.merge(outcome.records, [header])
    journal.close(remove=True)
    loaded.records = merge_in_memory(loaded.records, outcome.records)
    loaded.runs[run_id] = header
    where = ", ".join(str(_rel(p, req.root)) for p in files if not p.name.endswith((".runs.jsonl", ".output.jsonl")))
    if outcome.interrupted:
        log(f"interrupted: kept {len(outcome.records)} finished records in {where or 'the store'}; "
            f"{outcome.not_started} runs not recorded (killed in flight or not started); continue with --resume")
        return outcome
    if outcome.not_started:
        log(f"{outcome.not_started} runs not started before the --deadline; continue with --resume")
    log(f"recorded {len(outcome.records)} runs in {where or 'the store'}")
    if req.render:
        outcome.written = render_reports(req.root, req.reports_dir, matrix, store, {(req.target, req.suite): loaded})
        for path in outcome.written:
            log(f"wrote {_rel(path, req.root)}")
    recorded = [r for r in loaded.records if r.run_id == run_id]
    _gate(outcome, req, target, recorded, mismatch, log)
    return outcome


def _gate(outcome: RunOutcome, req: RunRequest, target: Target, recorded: list[Record], mismatch: str | None,
          log) -> None:
    """Compare with the expected state, unless the run was forced onto other hardware (its verdicts are not the
    target's)."""
    if mismatch:
        log(f"not compared with the expected state: {mismatch} (--force)")
        return
    outcome.gate = expected.check(req.root, req.target, req.suite, target.pins.torch, recorded, req.update_expected)
    for line in expected.describe(outcome.gate, req.root, req.target, req.suite):
        log(line)


def _rel(path: Path, root: Path) -> Path:
    return path.relative_to(root) if path.is_relative_to(root) else path


class _stop_on_signals:
    """SIGINT and SIGTERM pull the stopper (in the main thread only; elsewhere signals stay as they are)."""

    def __init__(self, stopper: Stopper, log):
        self.stopper, self.log, self.saved = stopper, log, {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if not self.stopper.stopped:
            self.log(f"{signal.Signals(signum).name}: starting nothing new, killing the runs in flight")
        self.stopper.stop()

    def __exit__(self, *exc) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)


def _progress(total: int, log):
    """One line per finished run (rich's live bar on a terminal)."""
    done = [0]
    if sys.stderr.isatty() and log is print:
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("running", total=total)

        def tick(rec: Record) -> None:
            done[0] += 1
            bar.console.print(f"[{done[0]}/{total}] {rec.key}: {rec.verdict} ({rec.seconds:.1f} s)", markup=False)
            bar.advance(task)
            if done[0] == total:
                bar.stop()
        return tick

    def line(rec: Record) -> None:
        done[0] += 1
        log(f"[{done[0]}/{total}] {rec.key}: {rec.verdict} ({rec.seconds:.1f} s) {one_line(rec.why)}")
    return line


# ---------------------------------------------------------------- container

def _run_in_container(req: RunRequest, matrix: Matrix, target: Target, log) -> RunOutcome:
    if req.cache:
        raise InputError("--cache keeps caches on this machine: use it with --host")
    if req.python is not None:
        raise InputError("--python names an interpreter on this machine: use it with --host")
    if req.torch:
        raise InputError("--torch builds an environment on this machine: use it with --host (the image holds the "
                         "target's pinned torch)")
    tag = dockerfiles.build(req.root / "images", req.target, target, req.base_image,
                       req.wheelhouse.resolve() if req.wheelhouse else None, req.base_python, log).tag
    log(f"{req.target}: running in {tag} (no network, non-root, repository read-only, memory limit "
        f"{container.memory_limit(req.jobs)})")
    inside = req.model_copy(update={"root": Path(container.REPO), "out": Path(container.OUT), "where": "host",
                                    "render": False, "update_expected": False, "wheelhouse": None,
                                    "base_image": None, "base_python": None})
    code = container.run(tag, req.root, req.store_dir, req.target, target, inside.model_dump_json(), req.jobs, log)
    store = Store(req.store_dir)
    loaded = store.load(req.target, req.suite)
    headers = sorted((h for h in loaded.runs.values() if h.mode == "host" and h.suite == req.suite),
                     key=lambda h: h.finished)
    if code not in (0, 1) or not headers:
        raise InputError(f"{req.target}: the container exited {code} without recording a run in {req.store_dir}")
    latest = headers[-1]
    outcome = RunOutcome(records=[r for r in loaded.records if r.run_id == latest.run_id],
                         interrupted=code == 130, not_started=latest.not_started)
    if req.render:
        outcome.written = render_reports(req.root, req.reports_dir, matrix, store, {(req.target, req.suite): loaded})
        for path in outcome.written:
            log(f"wrote {_rel(path, req.root)}")
    _gate(outcome, req, target, outcome.records, environment.hardware_mismatch(req.target, target, latest.environment),
          log)
    return outcome


def run_request_json(text: str) -> RunOutcome:
    """The container's entry point: the whole request, as JSON."""
    try:
        req = RunRequest.model_validate_json(text)
    except ValueError as err:
        raise InputError(f"run request: {str(err).splitlines()[0]}") from None
    return run(req, summary=False)


# ---------------------------------------------------------------- rendering

def render_reports(root: Path, reports_dir: Path, matrix: Matrix, store: Store,
                   in_memory: dict[tuple[str, str], Loaded] | None = None) -> list[Path]:
    """Every report, from the store; the target just run comes from memory, not read back from disk. Output tails
    are read only for the records the pages show (render.gather)."""
    in_memory = in_memory or {}
    loaded = Loaded()
    for name in matrix.targets:
        for suite in ("cases", "sweep"):
            loaded.add(in_memory.get((name, suite)) or store.load(name, suite, outputs=False))
    return render.write_all(root, reports_dir, matrix, loaded)
