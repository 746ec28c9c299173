"""Benchmarks that print figures (no pass/fail): `python -m reprokit.bench [--sample N] [--results FILE]`.

1. harness overhead per run: `reprokit`'s isolated run against `python script.py` run bare, median over a sample;
2. corpus wall time against the ideal (sum of per-run seconds / jobs), from a recorded results file;
3. rendering time of the Markdown, JUnit and badge outputs from 10,000 result records.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import corpus, publish, report, results
from .execute import observe


def overhead(root: Path, sample: int) -> None:
    chosen = [cd for cd in corpus.discover(root / "cases")
              if cd.case.requires.launcher == "python" and "cpu" in cd.case.requires.devices][:sample]
    rows = []
    for cd in chosen:
        script, case_env = cd.script("repro"), {"REPRO_DEVICE": "cpu", "REPRO_DTYPE": cd.case.requires.dtypes[0]}
        with tempfile.TemporaryDirectory() as tmp:
            # The same compile settings as the harness gives a run (one compile thread, cold cache), so the
            # difference is the harness: isolation, probe, environment, process-group handling.
            env = {**os.environ, **case_env, "TORCHINDUCTOR_CACHE_DIR": tmp, "TORCHINDUCTOR_COMPILE_THREADS": "1",
                   "OMP_NUM_THREADS": str(os.cpu_count() or 1)}
            start = time.monotonic()
            subprocess.run([sys.executable, str(script)], cwd=tmp, env=env, capture_output=True, check=False)
            bare = time.monotonic() - start
        start = time.monotonic()
        observe(script, env=dict(os.environ), extra_env=case_env, timeout=900, threads=os.cpu_count() or 1)
        harness = time.monotonic() - start
        rows.append((script.parent.name, bare, harness))
        print(f"  {script.parent.name:40} bare {bare:6.2f} s  harness {harness:6.2f} s  +{harness - bare:5.2f} s")
    extra = statistics.median(h - b for _, b, h in rows)
    relative = statistics.median((h - b) / b for _, b, h in rows)
    print(f"1. harness overhead per run: median +{extra:.2f} s ({relative:+.1%}) over {len(rows)} repro scripts "
          f"(floor: <= max(5%, 0.3 s))")


def wall_vs_ideal(path: Path) -> None:
    res = results.load(path)
    ran = [r for r in res.records if r.status]
    jobs = res.run.get("jobs") or 1
    ideal = sum(r.seconds for r in ran) / jobs
    wall = res.run.get("wall_seconds", 0)
    note = " (a partial or resumed run)" if res.run.get("selection") or res.run.get("resumed") else ""
    print(f"2. corpus wall {wall:.0f} s vs ideal {ideal:.0f} s (sum of {len(ran)} run times / {jobs} jobs): "
          f"{wall / ideal:.2f}x{note}; ladder re-runs are in the wall time, not in the ideal (floor: <= 1.15x)")


def render_10k(root: Path, path: Path) -> None:
    res = results.load(path)
    cases = {c.case.id: c for c in corpus.discover(root / "cases")}
    base = [r for r in res.records if r.case in cases]
    records = []
    while len(records) < 10_000:
        for rec in base:
            clone = copy.copy(rec)
            clone.key = f"{rec.key}#{len(records)}"
            clone.dtype = f"{rec.dtype}-{len(records)}"
            records.append(clone)
            if len(records) == 10_000:
                break
    big = results.ResultSet(res.target, res.run, res.environment, records)
    start = time.perf_counter()
    report.render_target(big, cases, "bench")
    report.render_index({res.target: big}, cases, {})
    publish.junit_xml(big)
    publish.badge(big)
    seconds = time.perf_counter() - start
    print(f"3. rendering 10,000 records (target report, index, JUnit, badge; not the PNG heatmap): {seconds:.2f} s "
          "(floor: < 2 s)")


def warm_vs_cold(cold_path: Path, warm_path: Path) -> None:
    cold, warm = results.load(cold_path), results.load(warm_path)
    a = {r.key: r.verdict for r in cold.records}
    b = {r.key: r.verdict for r in warm.records}
    differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    ratio = warm.run.get("wall_seconds", 0) / max(cold.run.get("wall_seconds", 1), 1e-9)
    print(f"4. warm interpreter: {len(b)} runs, {len(differ)} verdicts differ from the cold run"
          + (f" ({', '.join(differ[:5])})" if differ else "")
          + f"; wall {warm.run.get('wall_seconds', 0):.0f} s vs cold {cold.run.get('wall_seconds', 0):.0f} s "
          f"= {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m reprokit.bench", description=__doc__)
    parser.add_argument("--root", default=".")
    parser.add_argument("--sample", type=int, default=6, help="repro scripts timed for the overhead figure")
    parser.add_argument("--results", default="reports/cpu/results.json", help="a recorded run, for figures 2 and 3")
    parser.add_argument("--warm-results", help="the same corpus run with --warm, for the warm/cold comparison")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    overhead(root, args.sample)
    wall_vs_ideal(root / args.results)
    render_10k(root, root / args.results)
    if args.warm_results:
        warm_vs_cold(root / args.results, Path(args.warm_results).resolve())


if __name__ == "__main__":
    main()
