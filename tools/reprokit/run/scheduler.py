"""Run a plan of CaseRuns in parallel, judge each observation, and hand each record over as it finishes.

Stops cleanly: once the Stopper is pulled (SIGINT, SIGTERM, the deadline for new runs), nothing new starts, runs in
flight are killed with their process groups and are not recorded (a killed run is no observation).
On accelerator targets each run is placed on its devices (devices.py): it sees only those.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from reprokit import __version__
from reprokit.model.corpus import DEVICE_STRING, FIX_VARIANTS, CaseRun
from reprokit.model.records import Record, RunStatus, Suite
from reprokit.model.verdict import Verdict
from reprokit.run import host_folders
from reprokit.run.devices import DeviceSlots, Dispatcher, visible_env
from reprokit.run.execute import Observation, observe
from reprokit.run.outcome import LADDER, fix_verdict, ladder_stage, repro_verdict
from reprokit.run.process_groups import Interrupted, Stopper
from reprokit.run.warm import WarmPool

# A run never recorded is expected to take this share of its case's timeout. Ordering only: the timeout a case declares
# is the best prior a fresh store has, so cases allowed many minutes (FP8 autotuning) start first, not last.
UNRECORDED_SHARE = 0.25


def longest_first(runs: list[CaseRun], recorded: dict[str, float]) -> list[CaseRun]:
    """The runs, longest expected first, so that the end of a run is short jobs and the wall time nears the longest
    run's. A run's expected time is `recorded[key]` (its last recorded seconds), else a share of its case's timeout;
    a run that will be skipped takes none."""

    def expected(run: CaseRun) -> float:
        if run.skip:
            return 0.0
        return recorded.get(run.key, run.case.requires.timeout * UNRECORDED_SHARE)

    return sorted(runs, key=expected, reverse=True)


@dataclass(frozen=True)
class Identity:
    """What every record of one runner invocation shares."""

    target: str
    suite: Suite
    torch: str
    device: str
    run_id: str


@dataclass
class RunOptions:
    device_kind: str
    jobs: int
    timeout: float | None = None  # overrides every case's own timeout
    python: str = sys.executable
    ladder: bool = True
    deadline: float | None = None  # time.monotonic() after which no new run starts (runs in flight finish)
    warm: WarmPool | None = None  # warm-interpreter mode: python-launched runs fork from a zygote
    cache_dir: Path | None = None  # cache-warm mode: inductor and Triton caches kept here across runs
    stopper: Stopper = field(default_factory=Stopper)
    devices: tuple[str, ...] = ()  # the accelerator ids runs are placed on (devices.host_devices); () for the CPU
    jobs_per_device: int = 1  # runs at once on one device
    repeat: int = 1  # runs of each variant (--repeat N); runs that disagree make the verdict flaky
    # The store's last verdict of each run key under this torch and device: a verdict that differs from it is run
    # once more before it is recorded as a change (as PyTorch's CI re-runs a failing test before calling it a
    # regression).
    previous: dict[str, Verdict] = field(default_factory=dict)
    # Each run key's longest recorded time that ended within its limit (any torch): a run that hits its limit is
    # confirmed alone under max(CONFIRM_FACTOR x its limit, MARGIN x this).
    durations: dict[str, float] = field(default_factory=dict)
    confirm_alone: bool = True


# A time limit is never the verdict under load: the lone re-run's limit is this many times the first one's, or this
# margin over the longest run of it that finished in time, whichever is longer.
CONFIRM_FACTOR = 3.0
DURATION_MARGIN = 3.0


HANG_FLOOR = 20.0  # a hang's limit is never shorter than this, however quick its finished runs were


def first_limit(run: CaseRun, opts: RunOptions, oracle_kind: str) -> float:
    """A run's time limit: --timeout, else, for a case whose bug is a hang, a margin over the longest run of it that
    finished in time (what a non-hanging run takes, not a guess), else the case's declared timeout."""
    if opts.timeout:
        return opts.timeout
    finished = max((s for key, s in opts.durations.items() if key.split("/", 1)[0] == run.case.id), default=0.0)
    if oracle_kind == "hangs" and finished:
        return max(HANG_FLOOR, finished * DURATION_MARGIN)
    return run.case.requires.timeout


def confirm_limit(run: CaseRun, opts: RunOptions, oracle_kind: str) -> float:
    first = first_limit(run, opts, oracle_kind)
    return max(first * CONFIRM_FACTOR, opts.durations.get(run.key, 0.0) * DURATION_MARGIN)


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_record(
    ident: Identity,
    run: CaseRun,
    verdict: Verdict,
    why: str,
    obs: Observation | None = None,
    ladder: dict | None = None,
    repeats: dict[str, int] | None = None,
) -> Record:
    observed = obs.record_fields() if obs is not None else {}
    return Record(
        target=ident.target,
        suite=ident.suite,
        torch=ident.torch,
        device=ident.device,
        case=run.case.id,
        variant=run.variant,
        dtype=run.dtype,
        verdict=verdict,
        why=why,
        ladder=ladder,
        run_id=ident.run_id,
        recorded_at=now_iso(),
        reprokit=__version__,
        case_hash=run.content or None,
        repeats=repeats,
        **observed,
    )


def execute_run(
    run: CaseRun,
    ident: Identity,
    opts: RunOptions,
    threads: int,
    device_ids: tuple[str, ...] = (),
    limit: float | None = None,
) -> Record | None:
    """Run one CaseRun (on device_ids, when given) and judge it; None if it did not start (deadline, stop) or was
    killed by a stop. limit: this run's time limit (the lone confirmation's), else the case's or --timeout."""
    if opts.stopper.stopped or (opts.deadline is not None and time.monotonic() > opts.deadline and limit is None):
        return None
    oracle = run.case.expect_for(ident.target).repro
    timeout = limit or first_limit(run, opts, oracle.kind)
    env_extra = {
        "REPRO_DEVICE": DEVICE_STRING[opts.device_kind],
        "REPRO_DTYPE": run.dtype,
        **dict(run.env),
        **visible_env(opts.device_kind, device_ids),
    }
    writable: tuple[Path, ...] = ()
    if opts.cache_dir is not None:  # cache-warm mode: the caches live outside the run's folder, writable for it
        # One folder per run (case, variant, dtype), the only one of DIR it may write: a cache entry is code that the
        # next reader executes, so no run may write what another case's run reads (or its own fix's).
        own = host_folders.cache_folder(opts.cache_dir, run.case.id, f"{run.variant}@{run.dtype}")  # checked
        env_extra.update(TORCHINDUCTOR_CACHE_DIR=str(own / "inductor"), TRITON_CACHE_DIR=str(own / "triton"))
        writable = (own,)

    def go(extra: dict[str, str]) -> Observation:
        if opts.warm is not None and run.case.requires.launcher == "python":
            return opts.warm.observe(
                run.script,
                env=dict(os.environ),
                extra_env={**env_extra, **extra},
                timeout=timeout,
                threads=threads,
                writable=writable,
                stopper=opts.stopper,
            )
        return observe(
            run.script,
            env=dict(os.environ),
            extra_env={**env_extra, **extra},
            timeout=timeout,
            launcher=run.case.requires.launcher,
            world_size=run.case.requires.world_size,
            python=opts.python,
            threads=threads,
            writable=writable,
            stopper=opts.stopper,
        )

    try:
        obs = go({})
        judge = fix_verdict if run.variant in FIX_VARIANTS else repro_verdict
        verdict, why = judge(oracle, obs)
        ladder = None
        # A failure whose traceback names no compiler stage (a wrong result, an error raised at run time) is placed
        # by re-running it on the simpler backends.
        if (
            judge is repro_verdict
            and opts.ladder
            and verdict is not Verdict.SKIPPED
            and obs.status == RunStatus.FAIL
            and obs.stage in ("runtime", None)
            and obs.dynamo
        ):
            ladder = {backend: go({"REPROKIT_BACKEND": backend}).status for backend in LADDER}
            ladder["default"] = obs.status
            obs.stage = ladder_stage(ladder)
        verdicts = [verdict] + [judge(oracle, go({}))[0] for _ in range(_more_runs(run, verdict, opts))]
        if len(verdicts) == 1:
            return make_record(ident, run, verdict, why, obs, ladder)
        failed = sum(v in (Verdict.REPRODUCES, Verdict.FIX_BROKEN) for v in verdicts)
        repeats = {"runs": len(verdicts), "failed": failed}
        if len(set(verdicts)) > 1:
            others = ", ".join(sorted({v.value for v in verdicts} - {verdict.value}))
            why = (
                f"flaky: {'reproduced' if judge is repro_verdict else 'broke'} in {failed} of {len(verdicts)} "
                f"runs (first: {verdict.value}; also: {others})"
            )
            verdict = Verdict.FLAKY
        return make_record(ident, run, verdict, why, obs, ladder, repeats)
    except Interrupted:
        return None


def _more_runs(run: CaseRun, verdict: Verdict, opts: RunOptions) -> int:
    """Further runs of this variant: --repeat N asks for N - 1; else one when the verdict differs from the store's
    last one for this torch (a change is confirmed before it is recorded). A skip is not run again."""
    if verdict is Verdict.SKIPPED:
        return 0
    if opts.repeat > 1:
        return opts.repeat - 1
    before = opts.previous.get(run.key)
    return int(before is not None and before.ran and before is not Verdict.FLAKY and before != verdict)


def run_all(
    runs: list[CaseRun], ident: Identity, opts: RunOptions, on_done: Callable[[Record], None] = lambda r: None
) -> list[Record]:
    """Run every CaseRun (skips are recorded at once); on_done gets each record in completion order.

    Runs not started before the deadline or a stop, and runs killed by a stop, are left out (not recorded), so a
    later --resume runs them.
    """
    records: list[Record] = []

    def finish(record: Record) -> None:
        records.append(record)
        on_done(record)

    for run in runs:
        if run.skip:
            finish(make_record(ident, run, Verdict.SKIPPED, run.skip))
    threads = max(1, (os.cpu_count() or 1) // max(1, opts.jobs))
    deferred: list[tuple[tuple[CaseRun, tuple[str, ...]], Record]] = []
    slots = DeviceSlots(opts.devices, opts.jobs_per_device) if opts.devices else None
    dispatch = Dispatcher([r for r in runs if not r.skip], opts.jobs, slots)
    pool = ThreadPoolExecutor(max_workers=max(1, opts.jobs))
    running: dict[Future, tuple[CaseRun, tuple[str, ...]]] = {}
    try:
        while dispatch.queue or running:
            while not opts.stopper.stopped and (placed := dispatch.next()) is not None:
                running[pool.submit(execute_run, placed[0], ident, opts, threads, placed[1])] = placed
            if not running:  # stopped with nothing in flight: the rest is not started
                break
            # A short wait, so that a signal handler in this (main) thread runs promptly.
            done, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in done:
                placed = running.pop(future)
                dispatch.finished(*placed)
                record = future.result()
                if record is not None and _to_confirm(record, opts):
                    deferred.append((placed, record))
                elif record is not None:
                    finish(record)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for (run, device_ids), first in deferred:  # nothing else of this run is in flight now
        finish(_confirmed_alone(run, first, ident, opts, device_ids))
    return records


def _to_confirm(record: Record, opts: RunOptions) -> bool:
    """A run that hit its time limit is run again alone, with a longer limit, before it is recorded: other runs in
    flight, or any other load on the machine, must not make a hang or a broken fix."""
    return opts.confirm_alone and record.status == RunStatus.TIMEOUT and not opts.stopper.stopped


def _confirmed_alone(
    run: CaseRun, first: Record, ident: Identity, opts: RunOptions, device_ids: tuple[str, ...]
) -> Record:
    """The lone re-run's record (with every core), saying that it confirmed, or overturned, the first run's timeout."""
    kind = run.case.expect_for(ident.target).repro.kind
    limit = confirm_limit(run, opts, kind)
    again = execute_run(run, ident, opts, max(1, os.cpu_count() or 1), device_ids, limit=limit)
    if again is None:  # stopped meanwhile: the first run's record, as it was
        return first
    note = (
        f"the first run hit its {first_limit(run, opts, kind):.0f} s limit ({first.verdict}); run "
        f"again alone with a {limit:.0f} s limit: {again.verdict} in {again.seconds:.0f} s"
    )
    return again.model_copy(update={"confirmed_alone": note})
