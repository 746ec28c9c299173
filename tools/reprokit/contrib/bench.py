"""Benchmarks that print figures (no pass/fail): `python -m reprokit.contrib.bench [--sample N] [--repeat R] [--corpus DIR]`.

1. harness overhead per run: `reprokit`'s isolated run against `python script.py` run bare, median over the CPU
   repro scripts of the corpus;
2. corpus wall time against the ideal (sum of per-run seconds / jobs), from a recorded cold run;
3. rendering time of the Markdown, JUnit and badge outputs from 10,000 result records;
4. the warm-interpreter run against the cold one: verdicts that differ, and the wall-time ratio;
5. loading a results store of 100,000 records and rendering its current view;
6. the CPU history: per torch release, the environment set-up time and the corpus wall time against the ideal;
7. a GPU corpus run placed on its devices (bench/h100-placement/results): wall time against the ideal and against
   the longest run (no order of the runs ends before it);
8. building the compatibility site (`reprokit site`) from the committed store: median wall time of a few builds.
(9. copy-out of a run's --cache folder in MiB/s is bench_copy_out.py; 10. triage's time is tracker/bench_triage.py.)
Figures 2 and 4 read the committed runs (the store results/ and bench/warm/results/), or with --corpus DIR make
both runs first.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reprokit.model import corpus
from reprokit.model.claims import load_claims
from reprokit.model.matrix import load_matrix
from reprokit.model.records import Record, RunHeader
from reprokit.publish import render
from reprokit.publish.pages import ci_artifacts, index_page, report
from reprokit.publish.site import website
from reprokit.run.execute import observe
from reprokit.store.store import Store
from reprokit.store.views import View, current


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


def _main_run(store_dir: Path, target: str = "cpu") -> tuple[list[Record], RunHeader]:
    """The records and header of the CPU view's main run (the run that recorded most of the shown records)."""
    loaded = Store(store_dir).load(target, "cases")
    view = current(loaded, target, "cases", None)
    if view is None:
        raise SystemExit(f"{store_dir}: no {target} records")
    main = max(view.runs, key=lambda h: sum(r.run_id == h.run_id for r in view.records))
    return [r for r in view.records if r.run_id == main.run_id], main


def wall_vs_ideal(store_dir: Path) -> None:
    records, head = _main_run(store_dir)
    ran = [r for r in records if r.status]
    jobs = head.sittings[0].jobs if head.sittings else 1
    ideal = sum(r.seconds for r in ran) / jobs
    wall = head.wall_seconds
    note = " (a partial or resumed run)" if head.selection or len(head.sittings) > 1 else ""
    print(
        f"2. corpus wall {wall:.0f} s vs ideal {ideal:.0f} s (sum of {len(ran)} run times / {jobs} jobs): "
        f"{wall / ideal:.2f}x{note}; ladder re-runs are in the wall time, not in the ideal (floor: <= 1.15x)"
    )


def placement(store_dir: Path, target: str = "h100") -> None:
    """Figure 7: a GPU corpus run with each run placed on its devices."""
    if not (store_dir / target).is_dir():
        print(f"7. placement: no {target} run at {store_dir}")
        return
    records, head = _main_run(store_dir, target)
    ran = [r for r in records if r.status and r.seconds > 0]
    sitting = head.sittings[0]
    ideal = sum(r.seconds for r in ran) / sitting.jobs
    longest = max(ran, key=lambda r: r.seconds)
    bound = max(ideal, longest.seconds)
    print(
        f"7. placement: {head.target} on {len(sitting.devices)} device(s) of {head.device}, {sitting.jobs} jobs, at "
        f"most {sitting.jobs_per_device} per device: wall {head.wall_seconds:.0f} s for {len(ran)} runs of "
        f"{sum(r.seconds for r in ran):.0f} s; ideal (sum / jobs) {ideal:.0f} s = {head.wall_seconds / ideal:.2f}x; "
        f"longest run {longest.seconds:.0f} s ({longest.case}), so no order ends before {bound:.0f} s: "
        f"{head.wall_seconds / bound:.2f}x of that (goal: <= 1.1x)"
    )


def _copies(records: list[Record], n: int) -> list[Record]:
    """n distinct records made from the recorded ones (each copy gets its own dtype, so its own identity)."""
    out: list[Record] = []
    while len(out) < n:
        for rec in records:
            out.append(rec.model_copy(update={"dtype": f"{rec.dtype}-{len(out)}"}))
            if len(out) == n:
                break
    return out


def _render(view, cases) -> None:
    report.render_target(view, cases, "bench")
    index_page.render_index({view.target: view}, cases, {})
    ci_artifacts.junit_xml(view)
    ci_artifacts.badge(view)


def render_10k(root: Path, store_dir: Path) -> None:
    records, head = _main_run(store_dir)
    cases = {c.case.id: c for c in corpus.discover(root / "cases")}
    big = View("cpu", "cases", "bench", _copies([r for r in records if r.case in cases], 10_000), [head])
    start = time.perf_counter()
    _render(big, cases)
    seconds = time.perf_counter() - start
    print(
        f"3. rendering 10,000 records (target report, index, JUnit, badge; not the PNG heatmap): {seconds:.2f} s "
        "(floor: < 2 s)"
    )


def store_100k(root: Path, store_dir: Path) -> None:
    """Figure 5: a store of 100,000 records (copies of the recorded ones, over 4 torch builds) loaded and rendered."""
    records, head = _main_run(store_dir)
    cases = {c.case.id: c for c in corpus.discover(root / "cases")}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp))
        builds = [f"2.{m}.0+cpu" for m in (10, 11, 12, 13)]
        base = [r for r in records if r.case in cases]
        for build in builds:
            copies = [r.model_copy(update={"torch": build}) for r in _copies(base, 25_000)]
            store.merge(copies, [head.model_copy(update={"torch": build})])
        start, cpu_start = time.perf_counter(), time.process_time()
        loaded = store.load("cpu", "cases", outputs=False)  # as `reprokit report` does: tails only for the view
        loaded_at, cpu_loaded = time.perf_counter(), time.process_time()
        newest = current(loaded, "cpu", "cases", "2.13.0")
        assert newest is not None  # the store holds the copies merged above
        view = render.shown(loaded, newest, load_claims(root / "claims.yaml", set(cases)))
        _render(view, cases)
        done, cpu_done = time.perf_counter(), time.process_time()
    print(
        f"5. store of {len(loaded.records):,} records (4 torch builds): load {loaded_at - start:.2f} s, view and "
        f"render {done - loaded_at:.2f} s, total {done - start:.2f} s wall; CPU time of this process: load "
        f"{cpu_loaded - cpu_start:.2f} s, view and render {cpu_done - cpu_loaded:.2f} s (wall exceeds CPU on a busy "
        "machine) (floor: load + render < 2 s)"
    )


def history(store_dir: Path) -> None:
    """Figure 6: per torch release of the CPU history, its environment set-up time and wall time against the ideal."""
    loaded = Store(store_dir).load("cpu", "cases")
    rows = []
    for head in sorted(loaded.runs.values(), key=lambda h: h.finished):
        mine = [r for r in loaded.records if r.run_id == head.run_id and r.status]
        if not head.sittings or not mine or head.selection:
            continue
        jobs = head.sittings[0].jobs
        ideal = sum(r.seconds for r in mine) / jobs
        setup = sum(s.env_setup_seconds for s in head.sittings)
        rows.append((head.torch, setup, head.wall_seconds, ideal))
    if not rows:
        print("6. history: no whole-corpus runs recorded")
        return
    total_wall, total_ideal = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(
        f"6. history: {len(rows)} corpus runs, wall {total_wall:.0f} s vs ideal {total_ideal:.0f} s = "
        f"{total_wall / total_ideal:.2f}x; per release (set-up s, wall s, ideal s): "
        + "; ".join(f"{t} ({s:.0f}, {w:.0f}, {i:.0f})" for t, s, w, i in rows)
    )


def site_build(root: Path, store_dir: Path, repeat: int = 3) -> None:
    """Figure 8: `reprokit site` from the committed store, in this process (as the command runs it), `repeat` times."""
    walls, cpus, files = [], [], 0
    for _ in range(max(repeat, 1)):
        with tempfile.TemporaryDirectory() as tmp:
            start, cpu_start = time.perf_counter(), time.process_time()
            files = len(website.build(root, Path(tmp), load_matrix(root / "matrix.yaml"), Store(store_dir)))
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu_start)
    print(
        f"8. site build time for the committed store: median {statistics.median(walls):.2f} s wall (CPU "
        f"{statistics.median(cpus):.2f} s) over {len(walls)} builds of {files} files (floor: < 5 s)"
    )


def warm_vs_cold(cold_dir: Path, warm_dir: Path) -> None:
    (cold, cold_head), (warm, warm_head) = _main_run(cold_dir), _main_run(warm_dir)
    a = {r.key: r.verdict for r in cold}
    b = {r.key: r.verdict for r in warm}
    differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    ratio = warm_head.wall_seconds / max(cold_head.wall_seconds, 1e-9)
    print(
        f"4. warm interpreter: {len(b)} runs, {len(differ)} verdicts differ from the cold run's {len(a)}"
        + (f" ({', '.join(differ[:5])})" if differ else "")
        + f"; wall {warm_head.wall_seconds:.0f} s vs cold {cold_head.wall_seconds:.0f} s = {ratio:.2f}x",
        flush=True,
    )


def run_corpus(root: Path, out: Path, jobs: int) -> tuple[Path, Path]:
    """The whole CPU corpus, cold and then warm, each alone on the machine, through the real command line."""
    for mode in ("cold", "warm"):
        command = [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(root),
            "run",
            "--host",
            "--target",
            "cpu",
            "--jobs",
            str(jobs),
            "--no-report",
            "--out",
            str(out / mode),
            *(["--warm"] if mode == "warm" else []),
        ]
        print(f"   corpus, {mode} interpreter: {' '.join(command[2:])}", flush=True)
        subprocess.run(command, check=False, stdout=subprocess.DEVNULL)  # verdicts are compared below, not gated
    return out / "cold" / "results", out / "warm" / "results"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m reprokit.contrib.bench", description=__doc__)
    parser.add_argument("--root", default=".")
    parser.add_argument(
        "--sample", type=int, help="time only the first N repro scripts (default: every CPU one; 0: skip figure 1)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="times each script is run bare and under the harness")
    parser.add_argument(
        "--corpus",
        metavar="DIR",
        help="run the whole CPU corpus cold and warm into DIR for figures 2 and 4 (about 15 min on "
        "2 cores); without it they come from --results and --warm-results",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="jobs of the --corpus runs")
    parser.add_argument("--results", default="results", help="a results store holding a cold CPU corpus run")
    parser.add_argument(
        "--warm-results",
        default="bench/warm/results",
        help="a results store holding the same corpus run with --warm on the same machine",
    )
    parser.add_argument(
        "--no-bisect",
        action="store_true",
        help="skip figure 9 (a cold bisect downloads every torch release it needs: ~3 GB each)",
    )
    parser.add_argument(
        "--placement-results",
        default="bench/h100-placement/results",
        help="a results store holding a GPU corpus run placed on its devices (figure 7)",
    )
    args = parser.parse_args()
    root = Path(args.root).resolve()
    print(
        f"machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python "
        f"{sys.version.split()[0]}, torch {_torch_version()}",
        flush=True,
    )
    overhead(root, args.sample, args.repeat)
    cold, warm = (
        run_corpus(root, Path(args.corpus).resolve(), args.jobs)
        if args.corpus
        else (root / args.results, root / args.warm_results)
    )
    wall_vs_ideal(cold)
    render_10k(root, cold)
    store_100k(root, cold)
    history(cold)
    placement(root / args.placement_results)
    site_build(root, root / args.results)
    if warm.exists():
        warm_vs_cold(cold, warm)
    else:
        print(f"4. warm interpreter: no warm run at {warm} (pass --corpus DIR to make both runs)")
    if not args.no_bisect:
        from reprokit.contrib.bench_bisect import bisect_times

        bisect_times(root)


def _torch_version() -> str:
    out = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True, check=False
    )
    return out.stdout.strip() or "not importable"


if __name__ == "__main__":
    main()
