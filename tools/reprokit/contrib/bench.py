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
Figure 1 is measured in bench_overhead.py, figures 2, 4, 6 and 7 in bench_recorded.py, 3, 5 and 8 in bench_render.py;
this module makes the corpus runs (--corpus) and prints every figure in turn.
Figures 2 and 4 read the committed runs (the store results/ and bench/warm/results/), or with --corpus DIR make
both runs first.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

from reprokit.contrib.bench_overhead import overhead
from reprokit.contrib.bench_recorded import history, placement, wall_vs_ideal, warm_vs_cold
from reprokit.contrib.bench_render import render_10k, site_build, store_100k


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
