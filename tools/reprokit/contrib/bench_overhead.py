"""Figure 1 of `nox -s bench`: the harness's overhead per run, each CPU repro script of the corpus run bare
(`python script.py`) and under `reprokit`'s isolated run, one at a time, in alternating order."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reprokit.model import corpus
from reprokit.run.execute import observe


def _bare(script: Path, case_env: dict[str, str], timeout: float) -> float:
    """`python script.py` in the runner's own environment, with the compile settings the harness gives a run (one
    compile thread, cold cache), so the difference is the harness: isolation, probe, environment, process groups."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            **case_env,
            "TORCHINDUCTOR_CACHE_DIR": tmp,
            "TORCHINDUCTOR_COMPILE_THREADS": "1",
            "OMP_NUM_THREADS": str(os.cpu_count() or 1),
        }
        start = time.monotonic()
        try:
            subprocess.run(
                [sys.executable, str(script)], cwd=tmp, env=env, capture_output=True, check=False, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            pass  # the harness stops at the same limit
        return time.monotonic() - start


def _harness(script: Path, case_env: dict[str, str], timeout: float) -> float:
    start = time.monotonic()
    observe(script, env=dict(os.environ), extra_env=case_env, timeout=timeout, threads=os.cpu_count() or 1)
    return time.monotonic() - start


def overhead(root: Path, sample: int | None, repeat: int) -> None:
    """Each CPU repro script bare and under the harness, `repeat` times, one at a time, in alternating order."""
    chosen = [
        cd
        for cd in corpus.discover(root / "cases")
        if cd.case.requires.launcher == "python" and "cpu" in cd.case.requires.devices
    ][:sample]
    if not chosen:
        print("1. harness overhead per run: not measured (--sample 0)")
        return
    rows = []
    for n, cd in enumerate(chosen):
        script, case_env = cd.script("repro"), {"REPRO_DEVICE": "cpu", "REPRO_DTYPE": cd.case.requires.dtypes[0]}
        bare: list[float] = []
        harness: list[float] = []
        for i in range(repeat):
            pair = ((bare, _bare), (harness, _harness))
            for times, measure in pair if (n + i) % 2 == 0 else reversed(pair):  # neither always goes first
                times.append(measure(script, case_env, cd.case.requires.timeout))
        b, h = statistics.median(bare), statistics.median(harness)
        rows.append((b, h))
        spread = (
            f"  (spread of {repeat}: bare {max(bare) - min(bare):.2f} s, harness {max(harness) - min(harness):.2f} s)"
            if repeat > 1
            else ""
        )
        print(f"  {cd.case.id:44} bare {b:6.2f} s  harness {h:6.2f} s  {h - b:+6.2f} s{spread}", flush=True)
    extra = [h - b for b, h in rows]
    relative = statistics.median((h - b) / b for b, h in rows)
    within = sum(1 for b, h in rows if h - b <= max(0.05 * b, 0.3))
    q1, _, q3 = statistics.quantiles(extra, n=4) if len(extra) > 1 else (extra[0], 0, extra[0])
    print(
        f"1. harness overhead per run: median {statistics.median(extra):+.2f} s ({relative:+.1%}) over {len(rows)} "
        f"repro scripts x {repeat} (quartiles {q1:+.2f} / {q3:+.2f} s); {within}/{len(rows)} scripts within the "
        "floor (<= max(5%, 0.3 s))",
        flush=True,
    )
