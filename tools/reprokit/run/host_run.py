"""A run in this Python environment (or a torch release's own, built with uv): facts of the machine, the runs still to
do and the run's header; host_sitting.py runs them (a journal, the scheduler) and merges what finished into the
store."""

from __future__ import annotations

import os
import uuid

from reprokit import __version__
from reprokit.model import corpus
from reprokit.model.matrix import Target
from reprokit.model.records import Record, RunHeader, RunStatus, Sitting
from reprokit.model.schema import InputError
from reprokit.publish.pages import run_facts
from reprokit.run import devices, environment, host_folders, host_sitting, sandbox, torch_envs
from reprokit.run.plan import plan
from reprokit.run.request import Ran, RunRequest
from reprokit.run.scheduler import RunOptions, longest_first, now_iso
from reprokit.store.store import Loaded, Store, merge_in_memory


def run_here(req: RunRequest, target: Target, log) -> Ran:
    sandbox.require()  # no bubblewrap that can hold a run here: refused in one line before anything runs
    if req.warm and os.geteuid() == 0 and not sandbox.in_container():
        raise InputError(
            "--warm forks runs from a zygote outside bubblewrap, which as root would see the host: "
            "run cold (without --warm), as a user other than root, or in a container"
        )
    store = Store(req.store_dir)
    for found in store.recover(req.target):
        log(
            f"recovered {len(found.records)} finished records of a killed run from {found.path.name}"
            + (f"; ended {len(found.ended_pids)} processes it left" if found.ended_pids else "")
        )
    req, facts, setup, mismatch = _machine(req, target, log)
    kind = corpus.run_kind(target, facts)
    if kind != target.device.kind:
        log(f"no {target.device.kind} device here (--force): cases that run on a CPU run on it, the rest are skipped")
    ids = devices.host_devices(kind, facts.get("device_count") or 0, os.environ)
    per_device = devices.jobs_per_device(req.jobs, req.jobs_per_gpu)
    # a CPU run names the CPU as its device even where the machine has an accelerator (its name is the GPU's)
    torch, device = facts["torch"], (facts.get("device_name") or "cpu") if kind != "cpu" else "cpu"
    runs = plan(req, target, facts)
    loaded = store.load(req.target, req.suite)
    previous = _resumable(loaded, req, torch, device) if req.resume else None
    run_id = previous.run_id if previous else f"{now_iso().replace(':', '').replace('-', '')}-{uuid.uuid4().hex[:8]}"
    todo = _todo(req, runs, loaded, run_id, torch, device)
    placed = devices.describe(kind, ids, per_device)
    log(
        f"{req.target}: {len(runs)} runs ({len(runs) - len(todo)} already recorded), {req.jobs} jobs"
        + (f" on {placed}" if placed else "")
        + f", on {run_facts.machine_text(facts)}"
    )
    sitting = Sitting(
        jobs=req.jobs,
        started=now_iso(),
        on=run_facts.machine_text(facts),
        ended="running",
        env_setup_seconds=setup,
        devices=list(ids),
        jobs_per_device=per_device if ids else None,
    )
    header = RunHeader(
        run_id=run_id,
        target=req.target,
        suite=req.suite,
        torch=torch,
        device=device,
        environment=facts,
        mode="host",
        cache=f"warm ({req.cache})" if req.cache else "cold",
        interpreter="warm (forked from a zygote)" if req.warm else "cold",
        selection=req.cases,
        shard=req.shard,
        smoke=req.smoke,
        planned=previous.planned if previous else len(runs),
        not_started=len(todo),
        sittings=[*(previous.sittings if previous else []), sitting],
        reprokit=__version__,
    )
    previous_verdicts = {r.key: r.verdict for r in loaded.records if (r.torch, r.device) == (torch, device)}
    if req.cache:  # every cache folder checked (no link, the runner's, no one else's to write) before any run
        for run in todo:
            host_folders.cache_folder(req.cache.resolve(), run.case.id, f"{run.variant}@{run.dtype}")
    executed = host_sitting.execute(
        req,
        todo,
        header,
        store,
        RunOptions(
            device_kind=kind,
            jobs=req.jobs,
            timeout=req.timeout,
            python=req.interpreter,
            ladder=req.ladder,
            cache_dir=req.cache.resolve() if req.cache else None,
            devices=ids,
            jobs_per_device=per_device,
            repeat=req.repeat,
            previous=previous_verdicts,
            durations=_finished_in_time(loaded.records),
        ),
        log,
    )
    loaded.runs[run_id] = executed.header
    loaded.records = merge_in_memory(loaded.records, executed.outcome.records, loaded.runs)
    return Ran(
        executed.outcome,
        loaded,
        [r for r in loaded.records if r.run_id == run_id],
        mismatch,
        settle=not executed.outcome.interrupted,
    )


def _finished_in_time(records: list[Record]) -> dict[str, float]:
    """Each run key's longest recorded time among runs that ended within their limit (a hang's limit is set from
    what a non-hanging run of it takes, not from a guess)."""
    out: dict[str, float] = {}
    for rec in records:
        if rec.status not in (None, RunStatus.TIMEOUT) and rec.seconds:
            out[rec.key] = max(out.get(rec.key, 0.0), rec.seconds)
    return out


def _machine(req: RunRequest, target: Target, log) -> tuple[RunRequest, dict, float, str | None]:
    """The interpreter that runs the cases (a torch release's environment is built first), its facts, the seconds
    the build took, and why this machine is not the target's hardware (refused without --force)."""
    setup = 0.0
    if req.torch:
        built = torch_envs.ensure(
            req.torch, req.torch_index or target.pins.index_url, req.wheelhouse, log=log, family=target.family
        )
        req, setup = req.model_copy(update={"python": str(built.python)}), built.setup_seconds
    facts = environment.collect(req.interpreter)
    mismatch = environment.hardware_mismatch(req.target, target, facts)
    if mismatch and not req.force:
        raise InputError(f"{mismatch}; pass --force to run anyway")
    return req, facts, setup, mismatch


def _resumable(loaded: Loaded, req: RunRequest, torch: str, device: str) -> RunHeader | None:
    """The latest run of this target, suite, torch and device: the one --resume continues."""
    mine = [
        h
        for h in loaded.runs.values()
        if (h.target, h.suite, h.torch, h.device) == (req.target, req.suite, torch, device)
    ]
    return max(mine, key=lambda h: h.finished) if mine else None


def _todo(
    req: RunRequest, runs: list[corpus.CaseRun], loaded: Loaded, run_id: str, torch: str, device: str
) -> list[corpus.CaseRun]:
    """The runs not yet recorded by this run (--resume) or, with --skip-recorded, by this torch with the same case
    content; longest first."""
    done = {r.key for r in loaded.records if r.run_id == run_id}
    if req.skip_recorded:  # the history: what this torch already ran with the same case content is not run again
        content = {r.key: r.content for r in runs}
        done |= {
            r.key
            for r in loaded.records
            if (r.torch, r.device) == (torch, device) and r.case_hash and r.case_hash == content.get(r.key)
        }
    todo = [r for r in runs if r.key not in done]
    # Each run's last recorded time: this torch's, else the latest under another torch (a new release's first run).
    by_age = sorted(loaded.records, key=lambda r: (r.torch == torch, r.recorded_at))
    return longest_first(todo, {r.key: r.seconds for r in by_age})
