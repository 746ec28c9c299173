"""Figure 9 of the bench: `reprokit bisect --from SCRIPT` over the cpu target's recorded releases, cold (no torch
environment built, uv's wheel cache empty: every release it needs is downloaded) and warm (the same again), each
beside its floor: the environment builds (downloads and installs) plus the runs themselves."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = """import torch

print(torch.compile(lambda x: torch.relu(x) + 1)(torch.randn(8)))
"""


def _bisect(root: Path, cache: Path, script: Path) -> tuple[float, float, float, str]:
    """(wall, environment builds, runs, the answer line) of one bisect with REPROKIT_CACHE=cache."""
    env = {**os.environ, "REPROKIT_CACHE": str(cache), "PYTHONSAFEPATH": "1"}
    start = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(root),
            "bisect",
            "--target",
            "cpu",
            "--from",
            str(script),
            "--nonzero-exit",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - start
    builds = sum(float(s) for s in re.findall(r"ready in (\d+) s", proc.stdout))
    runs = sum(float(s) for s in re.findall(r"^\[\d+/\d+\] \S+: \S+ \(([\d.]+) s\)", proc.stdout, re.M))
    answer = next((ln for ln in proc.stdout.splitlines() if ln.startswith(str(script))), proc.stderr[-200:])
    return wall, builds, runs, answer.split(": ", 1)[-1]


def bisect_times(root: Path, cache: Path | None = None) -> None:
    with tempfile.TemporaryDirectory(prefix="reprokit-bench-bisect-") as tmp:
        cache = cache or Path(tmp) / "cache"
        script = Path(tmp) / "bench_script.py"
        script.write_text(SCRIPT)
        for label in ("cold", "warm"):
            wall, builds, runs, answer = _bisect(root, cache, script)
            print(
                f"9. bisect --from over the cpu history, {label}: {wall:.0f} s wall; floor {builds + runs:.0f} s "
                f"(environment builds {builds:.0f} s, runs {runs:.0f} s), bisect's own {wall - builds - runs:.0f} s; "
                f"answer: {answer}",
                flush=True,
            )
