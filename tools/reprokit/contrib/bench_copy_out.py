"""Figure 9 of `nox -s bench`: copy-out of a run's --cache folder (child/outbox.py, child/copy_out.py). A contained
run writes N MiB into its cache folder (8 MiB files, as compiled kernels and autotuning results come) and exits; the
figure is the keeper's copy-out time, from the case's end to the last file written on the host, as MiB/s (goal: 200 MiB
in under 5 s on a quiet 2-core machine). Prints figures, asserts nothing:
`python -m reprokit.contrib.bench_copy_out [--mib N] [--repeat R]`."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from reprokit.run.child_setup import write_readable_script
from reprokit.run.execute import observe

WRITES = """
import os
d = os.environ["REPRO_CACHE"]
block = os.urandom(1 << 20)  # incompressible: no file system can make it cheaper than the disk
for n in range({files}):
    with open(os.path.join(d, f"kernel-{{n}}.bin"), "wb") as fh:
        for _ in range(8):
            fh.write(block)
"""


def copy_out_once(mib: int) -> tuple[float, float, float, int]:
    """One run: (copy-out seconds, the case's seconds, the whole run's wall seconds, bytes on the host)."""
    folder = Path(tempfile.mkdtemp(prefix="reprokit-bench-copy-out-"))
    try:
        folder.chmod(0o755)  # the case's folder is read by the user a root runner drops to
        case = folder / "case"
        case.mkdir(mode=0o755)
        script = write_readable_script(case / "repro.py", WRITES.format(files=max(1, mib // 8)))
        cache = folder / "cache"
        cache.mkdir()
        os.environ["REPROKIT_CACHE_BUDGET"] = str((mib + 64) << 20)
        start = time.monotonic()
        obs = observe(
            script, env=dict(os.environ), extra_env={"REPRO_CACHE": str(cache)}, timeout=300, writable=(cache,)
        )
        wall = time.monotonic() - start
        landed = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())
        if obs.copy_out is None:
            raise SystemExit(f"9. copy-out: the run recorded no copy-out ({obs.status}: {obs.stderr_tail[-300:]})")
        return obs.copy_out.seconds, obs.seconds, wall, landed
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m reprokit.contrib.bench_copy_out", description=__doc__)
    parser.add_argument("--mib", type=int, default=200, help="MiB the case writes into its cache folder")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the median is printed")
    args = parser.parse_args()
    runs = [copy_out_once(args.mib) for _ in range(args.repeat)]
    copy = statistics.median(r[0] for r in runs)
    landed = runs[0][3] >> 20
    print(
        f"9. copy-out of a --cache folder: {landed} MiB in {copy:.2f} s = {landed / max(copy, 1e-6):.0f} MiB/s "
        f"(median of {len(runs)}; goal: 200 MiB in under 5 s), case {statistics.median(r[1] for r in runs):.2f} s, "
        f"whole run {statistics.median(r[2] for r in runs):.2f} s; load {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
