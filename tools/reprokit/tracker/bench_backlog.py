"""Figure 11 of `nox -s bench`: the backlog's throughput, issues per hour, on a folder of real issue files (default:
the triage fixtures, tests/fixtures/triage-two), judged by one shard from an empty journal, first with `--here` (this
environment's torch alone), then by default (the release each issue reports and the cpu target's newest stable, built
on first use: the build time is part of the figure, and the line says what was built). Prints figures, asserts
nothing. `python -m reprokit.tracker.bench_backlog [--folder DIR] [--limit N] [--jobs J] [--here-only]`."""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from reprokit.run import torch_envs
from reprokit.run.request import load_root_matrix
from reprokit.store.backlog_journal import JOURNAL, newest, read
from reprokit.tracker import triage_request
from reprokit.tracker.backlog_select import ALL, read_folder
from reprokit.tracker.backlog_shard import default_jobs, run_shard
from reprokit.tracker.judging import triage_releases

ROOT = Path.cwd()  # the repository: nox runs the bench from its root
FOLDER = ROOT / "tests" / "fixtures" / "triage-two"


def issues_per_hour(folder: Path, here: bool, jobs: int, limit: int | None, log=lambda *_: None) -> str:
    """One shard over the folder's first `limit` files, from an empty journal: the figure, in one line."""
    with tempfile.TemporaryDirectory(prefix="reprokit-bench-backlog-") as scratch:
        issues = Path(scratch) / "issues"
        issues.mkdir()
        for path in sorted(folder.glob("*.json"))[:limit]:
            shutil.copyfile(path, issues / path.name)
        out = Path(scratch) / "out"
        matrix = load_root_matrix(ROOT)
        request = triage_request.Request(target="cpu", here=here)
        built = torch_envs.built(triage_releases.newest_stable(matrix.targets["cpu"]))
        start = time.perf_counter()
        run_shard(read_folder(issues), ALL, request, matrix, out, jobs, ours=(ROOT,), log=log)
        seconds = time.perf_counter() - start
        kinds = Counter(j.kind for j in newest(read(out / JOURNAL)).values())
        count = sum(kinds.values())
    said = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
    mode = (
        "--here (this environment's torch)"
        if here
        else "default (reported release and cpu's newest stable"
        + (", already built)" if built else ", built on first use)")
    )
    return (
        f"    backlog {mode}: {count} issues in {seconds:.0f} s with --jobs {jobs}: "
        f"{count * 3600 / seconds:.1f} issues per hour ({said})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, default=FOLDER)
    parser.add_argument("--limit", type=int, default=None, help="the first N files only")
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--here-only", action="store_true", help="skip the default mode (it builds releases)")
    args = parser.parse_args()
    print(f"11. backlog on {args.folder} ({len(list(args.folder.glob('*.json')))} files), one shard:", flush=True)
    print(issues_per_hour(args.folder, True, args.jobs, args.limit), flush=True)
    if not args.here_only:
        print(issues_per_hour(args.folder, False, args.jobs, args.limit, log=_builds), flush=True)


def _builds(line: str) -> None:
    """Of a shard's progress, the releases each issue runs and what had to be built (the figure includes it)."""
    if "to build" in line or "could not be installed" in line:
        print(f"    {line}", flush=True)


if __name__ == "__main__":
    main()
