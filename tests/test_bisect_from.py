"""`reprokit bisect --from SCRIPT`: a user's own script across torch releases, without adding a case.

The script is this test's own: compiled, a float16 @ float32 batched matmul that eager refuses returned a result on
torch 2.11.0, and raises as eager does from 2.12.1 on (measured on both releases). Each release runs in its own
environment (run/torch_envs.py); the test needs those two built (`reprokit run --torch 2.11.0`, ~4 GB each), and says
so when they are not."""

import os
from pathlib import Path

import pytest
from support import run_reprokit

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
RELEASES = ("2.11.0", "2.12.1")
SCRIPT = '''"""Compiled, a float16 @ float32 batched matmul that eager refuses with a dtype error."""
import torch


def mix(a, b):
    return torch.softmax(a, dim=-1).half() @ b


a, b = torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)
try:
    mix(a, b)
except RuntimeError:
    pass
else:
    raise SystemExit("eager accepts the mix on this torch: nothing to compare")
try:
    out = torch.compile(mix)(a, b)
except Exception:  # the compiled function refuses it as eager does
    print("compiled refuses too")
else:
    raise AssertionError(f"compiled returned a {out.dtype} result where eager raised")
'''


def built(version):
    cache = Path(os.environ.get("REPROKIT_CACHE", Path.home() / ".cache" / "reprokit"))
    return (cache / "envs" / f"torch-{version}" / ".complete").exists()


@pytest.mark.heavy
@pytest.mark.skipif(not all(built(v) for v in RELEASES), reason="needs the torch 2.11.0 and 2.12.1 environments")
def test_a_script_fixed_in_a_known_release_is_bisected_to_that_release_and_nothing_is_added(tmp_path):
    proc = bisect(tmp_path, SCRIPT, "--wrong-result", "--versions", *RELEASES)
    repo = tmp_path / "repo"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| 2.11.0 | 🔴 reproduces |" in proc.stdout and "| 2.12.1 | 🟢 does-not-reproduce |" in proc.stdout
    assert "fixed in 2.12.1: last bad 2.11.0, first good 2.12.1" in proc.stdout
    assert "not kept (--keep makes it a case)" in proc.stdout
    assert not any((repo / "cases").iterdir()) and not (repo / "results").exists()


COMPILES = """import torch

print(torch.compile(lambda x: torch.sin(x) * torch.cos(x) + x.sum())(torch.randn(64)))
"""


def bisect(tmp_path, script_text, *args):
    """`reprokit bisect --target cpu --from SCRIPT ARGS` in a project of this checkout's matrix.yaml and no case."""
    repo = tmp_path / "repo"
    (repo / "cases").mkdir(parents=True)
    (repo / "matrix.yaml").write_bytes((ROOT / "matrix.yaml").read_bytes())
    script = tmp_path / "script.py"
    script.write_text(script_text)
    return run_reprokit(repo, "bisect", "--target", "cpu", "--from", str(script), *args, timeout=2400)


@pytest.mark.heavy
@pytest.mark.timeout(1800)
def test_releases_whose_runs_time_out_make_the_answer_undecided_and_keep_what_they_printed(tmp_path):
    """A first compile outlives a 1 s limit (and the lone re-run's 3 s) on every release: never "no change"."""
    proc = bisect(
        tmp_path, COMPILES, "--nonzero-exit", "--timeout", "1", "--versions", "2.13.0", "2.14.1", "--no-between"
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]  # undecided: no answer
    assert "undecided: torch 2.14.1 and 2.13.0 are both undecided for the same reason (timed out" in proc.stdout
    assert "no change" not in proc.stdout
    # the 1 s limit is confirmed with 3 s before a timeout; no run finished, so no limit is guessed
    assert "what the script needs is unknown" in proc.stdout and "it was killed after 3 s" in proc.stdout
    kept = next(line for line in proc.stdout.splitlines() if "the scratch repository" in line).split(" kept in ")[1]
    folder = Path(kept.split(" (")[0])
    assert (folder / "results").is_dir()
    import shutil

    shutil.rmtree(folder)
