"""Run a plan of CaseRuns in parallel, turn each observation into a record, and journal it as it finishes."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from .corpus import DEVICE_STRING, FIX_VARIANTS, CaseRun
from .execute import Observation, observe
from .outcome import Verdict, fix_verdict, repro_verdict
from .results import Journal, Record
from .warm import WarmPool

LADDER = ("eager", "aot_eager")  # then the case's own backend (inductor by default)


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


def _record(run: CaseRun, obs: Observation, verdict: Verdict, why: str, ladder: dict | None) -> Record:
    return Record(key=run.key, case=run.case.id, variant=run.variant, dtype=run.dtype, verdict=str(verdict),
                  why=why, status=obs.status, exit_code=obs.exit_code, signal=obs.signal, exception=obs.exception,
                  message=obs.message, stage=obs.stage, ladder=ladder, dynamo=obs.dynamo, seconds=obs.seconds,
                  stderr_tail=obs.stderr_tail, stdout_tail=obs.stdout_tail[-2000:],
                  output_bytes={"stdout": obs.stdout_bytes, "stderr": obs.stderr_bytes},
                  confined=_confined(obs.probes))


def _confined(probes: list[dict]) -> int | None:
    """The Landlock ABI every process of the run (each torchrun rank) was confined with; None if one was not."""
    abis = [p.get("confined") for p in probes]
    return min(abis) if abis and all(abis) else None


def skipped_record(run: CaseRun) -> Record:
    return Record(key=run.key, case=run.case.id, variant=run.variant, dtype=run.dtype,
                  verdict=str(Verdict.SKIPPED), why=run.skip or "")


def ladder_stage(ladder: dict[str, str]) -> str:
    """The first backend on the eager -> aot_eager -> inductor ladder that fails names the faulty stage."""
    if ladder["eager"] != "pass":
        return "dynamo"
    if ladder["aot_eager"] != "pass":
        return "aot_autograd"
    return "inductor"


def execute_run(run: CaseRun, target: str, opts: RunOptions, threads: int) -> Record | None:
    """Run one CaseRun and judge it; None if the deadline passed before it could start."""
    if opts.deadline is not None and time.monotonic() > opts.deadline:
        return None
    oracle = run.case.expect_for(target).repro
    timeout = opts.timeout or run.case.requires.timeout
    env_extra = {"REPRO_DEVICE": DEVICE_STRING[opts.device_kind], "REPRO_DTYPE": run.dtype, **dict(run.env)}
    writable = ()
    if opts.cache_dir is not None:  # cache-warm mode: the caches live outside the run's folder, writable for it
        env_extra.update(TORCHINDUCTOR_CACHE_DIR=str(opts.cache_dir / "inductor"),
                         TRITON_CACHE_DIR=str(opts.cache_dir / "triton"))
        writable = (opts.cache_dir,)

    def go(extra: dict[str, str]) -> Observation:
        if opts.warm is not None and run.case.requires.launcher == "python":
            return opts.warm.observe(run.script, env=dict(os.environ), extra_env={**env_extra, **extra},
                                     timeout=timeout, threads=threads, writable=writable)
        return observe(run.script, env=dict(os.environ), extra_env={**env_extra, **extra}, timeout=timeout,
                       launcher=run.case.requires.launcher, world_size=run.case.requires.world_size,
                       python=opts.python, threads=threads, writable=writable)

    obs = go({})
    if run.variant in FIX_VARIANTS:
        verdict, why = fix_verdict(oracle, obs)
        return _record(run, obs, verdict, why, None)
    verdict, why = repro_verdict(oracle, obs)
    ladder = None
    # A failure whose traceback names no compiler stage (a wrong result, an error raised at run time) is placed
    # by re-running it on the simpler backends.
    if (opts.ladder and verdict is not Verdict.SKIPPED and obs.status == "fail" and obs.stage in ("runtime", None)
            and obs.dynamo):
        ladder = {backend: go({"REPROKIT_BACKEND": backend}).status for backend in LADDER}
        ladder["default"] = obs.status
        obs.stage = ladder_stage(ladder)
    return _record(run, obs, verdict, why, ladder)


def run_all(runs: list[CaseRun], target: str, opts: RunOptions, journal: Journal,
            on_done: Callable[[Record], None] = lambda r: None) -> list[Record]:
    """Run every CaseRun (skips are recorded at once); records are journalled in completion order.

    Runs not started before `opts.deadline` are left out (not recorded), so a later --resume runs them.
    """
    lock = threading.Lock()
    records: list[Record] = []

    def finish(record: Record) -> None:
        with lock:
            journal.append(record)
            records.append(record)
            on_done(record)

    for run in runs:
        if run.skip:
            finish(skipped_record(run))
    todo = [r for r in runs if not r.skip]
    threads = max(1, (os.cpu_count() or 1) // max(1, opts.jobs))
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = [pool.submit(execute_run, run, target, opts, threads) for run in todo]
        for future in as_completed(futures):
            record = future.result()
            if record is not None:
                finish(record)
    return records
