"""Sandbox, round six: the copy-out of the budgeted host folders (--cache, TORCH_TRACE) and the last open doors. Each
test runs a real case script through the real runner (host mode, bubblewrap) and asserts that the attack ran and
that its effect is absent. Speed is not asserted here: `nox -s bench` prints copy-out's MiB/s."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from reprokit.run.execute import observe
from support import case_script

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the drop to nobody and runner-owned files need a root runner")


def run_with_cache(tmp_path: Path, source: str, cache: Path, timeout: float = 60):
    return observe(
        case_script(tmp_path, source),
        env=dict(os.environ),
        extra_env={"REPRO_CACHE": str(cache)},
        timeout=timeout,
        writable=(cache,),
    )


def host_files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


# ------------------------------------------------------------------ 1: copy-out is outside the case's timeout

WRITES_160_MIB = r"""
import os
d = os.environ["REPRO_CACHE"]
block = b"c" * (1 << 20)
for n in range(20):
    with open(os.path.join(d, f"kernel-{n}.so"), "wb") as fh:
        for _ in range(8):
            fh.write(block)
print("WROTE 160 MiB")
"""


def test_copy_out_runs_after_the_case_outside_its_timeout_and_is_timed_apart(tmp_path, monkeypatch):
    # before: the keeper drained 64 KiB per 0.2 s tick (0.3 MiB/s): 160 MiB became a timeout with nothing on the host
    monkeypatch.setenv("REPROKIT_CACHE_BUDGET", str(256 << 20))
    cache = tmp_path / "cache"
    cache.mkdir()
    obs = run_with_cache(tmp_path, WRITES_160_MIB, cache, timeout=20)
    assert "WROTE 160 MiB" in obs.stdout_tail, obs.stderr_tail
    assert (obs.status, obs.exit_code) == ("pass", 0), (obs.status, obs.contained, obs.stderr_tail)
    assert "cache budget 256 MiB" in obs.contained
    assert host_files(cache) == {f"kernel-{n}.so": 8 << 20 for n in range(20)}
    assert (obs.copy_out.files, obs.copy_out.bytes, obs.copy_out.not_copied) == (20, 160 << 20, ())
    assert obs.seconds < 20  # the case's own time: copy-out is counted apart, in copy_out.seconds
    fields = obs.record_fields()["output_bytes"]
    assert fields["copied_out"] == 160 << 20 and fields["copied_out_files"] == 20 and fields["not_copied_files"] == 0


# ------------------------------------------------------------------ 2: every file copied or recorded; the keeper ends

LONG_NAMES = r"""
import os
d = os.environ["REPRO_CACHE"]
for name in ("a" * 241, "b" * 250, "c" * 255, "plain.txt"):
    open(os.path.join(d, name), "w").write(name[:1])
os.makedirs(os.path.join(d, "sub"))
open(os.path.join(d, "sub", "z" * 255), "w").write("deep")
raise SystemExit(3)
"""


def test_names_of_241_to_255_bytes_are_copied_and_the_case_s_exit_stays_its_own(tmp_path):
    # before: `<name>.reprokit-<pid>` was over 255 bytes: the keeper crashed (exit 1, no `contained`, files lost)
    cache = tmp_path / "cache"
    cache.mkdir()
    obs = run_with_cache(tmp_path, LONG_NAMES, cache)
    assert (obs.status, obs.exit_code) == ("fail", 3), (obs.status, obs.exit_code, obs.stderr_tail)
    assert "cache budget" in obs.contained and "landlock ABI" in obs.contained
    assert host_files(cache) == {"a" * 241: 1, "b" * 250: 1, "c" * 255: 1, "plain.txt": 1, f"sub/{'z' * 255}": 4}
    assert not [p for p in cache.rglob("*") if p.name.startswith(".rk")]  # no temporary file left behind


OBSERVE_UNDER_A_FILE_LIMIT = r"""
import json, os, resource, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from reprokit.run.execute import observe
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 20, resource.RLIM_INFINITY))
cache = Path(sys.argv[2])
obs = observe(Path(sys.argv[1]), env=dict(os.environ), extra_env={"REPRO_CACHE": str(cache)}, timeout=60,
              writable=(cache,))
copied = getattr(obs, "copy_out", None)
print(json.dumps({"status": obs.status, "exit_code": obs.exit_code, "contained": obs.contained,
                  "not_copied": [list(n) for n in copied.not_copied] if copied else []}))
"""

SMALL_THEN_BIG = r"""
import os
d = os.environ["REPRO_CACHE"]
open(os.path.join(d, "a-small.txt"), "w").write("small")
open(os.path.join(d, "b-big.bin"), "wb").write(b"b" * (4 << 20))
raise SystemExit(3)
"""


def test_a_host_disk_that_fails_mid_copy_out_leaves_the_keeper_its_end_and_records_what_was_not_copied(tmp_path):
    # before: an OSError in the keeper's spool or receive ended the keeper (exit 1 instead of 3, no `contained`)
    cache = tmp_path / "cache"
    cache.mkdir()
    driver = tmp_path / "driver.py"
    driver.write_text(OBSERVE_UNDER_A_FILE_LIMIT)
    done = subprocess.run(
        [sys.executable, str(driver), str(case_script(tmp_path, SMALL_THEN_BIG)), str(cache), "", str(ROOT / "tests")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert (said["status"], said["exit_code"]) == ("fail", 3), said
    assert "cache budget" in said["contained"]
    assert host_files(cache) == {"a-small.txt": 5}
    assert "b-big.bin" in [path for path, _why in said["not_copied"]], said


# ------------------------------------------------------------------ 3: files budget; the host folder is what the run left

MANY_EMPTY_FILES = r"""
import os
d = os.environ["REPRO_CACHE"]
for n in range(400):
    open(os.path.join(d, f"e{n:04}"), "w").close()
print("MADE 400")
"""


def test_the_cache_budget_bounds_files_as_well_as_bytes(tmp_path, monkeypatch):
    # before: 40,000 empty files under a 1 MiB budget all landed on the host
    monkeypatch.setenv("REPROKIT_CACHE_FILES", "50")
    cache = tmp_path / "cache"
    cache.mkdir()
    obs = run_with_cache(tmp_path, MANY_EMPTY_FILES, cache)
    assert "MADE 400" in obs.stdout_tail
    assert len(host_files(cache)) == 50
    assert obs.status == "over-budget" and obs.over_budget.startswith("cache "), (obs.status, obs.over_budget)
    assert obs.copy_out.files == 50 and obs.copy_out.not_copied_count == 350


ROTATES = r"""
import os, shutil
d = os.environ["REPRO_CACHE"]
print("SEEDED", sorted(os.listdir(d)))
for name in os.listdir(d):
    path = os.path.join(d, name)
    shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
run = os.environ["RUN"]
os.makedirs(os.path.join(d, f"gen-{run}"))
open(os.path.join(d, f"gen-{run}", "blob.bin"), "wb").write(b"r" * (12 << 20))
"""


def test_deletions_reach_the_host_so_runs_together_stay_within_the_budget(tmp_path, monkeypatch):
    # before: nothing was ever removed from the host folder: three runs of a 16 MiB budget left 36 MiB there
    monkeypatch.setenv("REPROKIT_CACHE_BUDGET", str(16 << 20))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "stale.txt").write_text("from before")
    for run in "123":
        (tmp_path / run).mkdir()
        obs = observe(
            case_script(tmp_path / run, ROTATES),
            env=dict(os.environ),
            extra_env={"REPRO_CACHE": str(cache), "RUN": run},
            timeout=60,
            writable=(cache,),
        )
        assert obs.status == "pass", (obs.status, obs.stderr_tail)
        assert host_files(cache) == {f"gen-{run}/blob.bin": 12 << 20}, run
        assert sorted(p.name for p in cache.iterdir()) == [f"gen-{run}"]
    assert "SEEDED ['gen-2']" in obs.stdout_tail


# ------------------------------------------------------------------ 4: headers of any length

LONG_HEADER = r"""
import os
d = os.fsencode(os.environ["REPRO_CACHE"])
deep = os.path.join(d, b"a", b"\xff" * 255, b"\xfe" * 255, b"\xfd" * 255)
os.makedirs(deep)
open(os.path.join(deep, b"\xfc" * 200), "wb").write(b"deep")
os.makedirs(os.path.join(d, b"b"))
open(os.path.join(d, b"b", b"later.txt"), "wb").write(b"after the long header")
"""


def test_a_header_over_4096_bytes_is_copied_and_the_files_after_it_too(tmp_path):
    # before: a JSON header over 4,096 bytes (non-UTF-8 names escaped six characters a byte) ended the copy-out
    cache = tmp_path / "cache"
    cache.mkdir()
    obs = run_with_cache(tmp_path, LONG_HEADER, cache)
    assert obs.status == "pass", (obs.status, obs.stderr_tail)
    deep = os.path.join(os.fsencode(cache), b"a", b"\xff" * 255, b"\xfe" * 255, b"\xfd" * 255, b"\xfc" * 200)
    with open(deep, "rb") as fh:
        assert fh.read() == b"deep"
    assert (cache / "b" / "later.txt").read_text() == "after the long header"


# ------------------------------------------------------------------ 5: the runner's folder, vsock


@ROOT_ONLY
def test_the_host_cache_folder_stays_the_runner_s(tmp_path):
    # before: the folder was lchown-ed to nobody: a host process of that user could plant what the next run loads
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o755)
    obs = run_with_cache(
        tmp_path, "import os\nopen(os.path.join(os.environ['REPRO_CACHE'], 'k'), 'w').write('k')\n", cache
    )
    assert obs.status == "pass" and (cache / "k").read_text() == "k", obs.stderr_tail
    assert "uid 65534" in obs.contained
    assert {(p.stat().st_uid, p.stat().st_gid) for p in [cache, *cache.rglob("*")]} == {(0, 0)}


VSOCK = r"""
import socket
for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    try:
        socket.socket(socket.AF_VSOCK, kind).close()
        print("VSOCK MADE")
    except OSError as err:
        print("VSOCK REFUSED", err.errno)
"""


def _host_has_vsock() -> bool:
    try:
        socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()
        return True
    except (OSError, AttributeError):
        return False


@pytest.mark.skipif(not _host_has_vsock(), reason="this kernel makes no vsock socket even outside a sandbox")
def test_vsock_sockets_are_denied_by_the_filter(tmp_path):
    from reprokit.run import syscall_filter

    obs = observe(case_script(tmp_path, VSOCK), env=dict(os.environ), extra_env={}, timeout=60)
    assert "seccomp filter" in obs.contained
    assert obs.stdout_tail.count("VSOCK REFUSED 1") == 2 and "VSOCK MADE" not in obs.stdout_tail, obs.stdout_tail
    assert len(syscall_filter.DENIED_FAMILIES["AF_VSOCK"][1]) > 20


# ------------------------------------------------------------------ 5: an import no run of the case recorded (N43)

RAISES_VALUE_ERROR = """id: real-case
title: t
category: diagnosis
expect:
  repro: {kind: raises, exception: ValueError}
"""


def test_import_refuses_a_record_no_run_signed_even_with_the_real_hash_and_a_verdict_that_follows(
    tmp_path, monkeypatch
):
    # before: a forged record with the real case hash and an observation that gives its verdict was imported
    from reprokit.store.store import Store
    from support import run_reprokit

    monkeypatch.setenv("REPROKIT_RECORD_KEY", "c4" * 32)  # the runner's key (CI: a secret); never a case's
    root = tmp_path / "repo"
    (root / "cases" / "real-case").mkdir(parents=True)
    (root / "matrix.yaml").write_text((ROOT / "matrix.yaml").read_text())
    (root / "cases" / "real-case" / "case.yaml").write_text(RAISES_VALUE_ERROR)
    (root / "cases" / "real-case" / "repro.py").write_text("print('the bug is fixed')\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v1"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    out = tmp_path / "out"
    done = run_reprokit(
        root, "run", "--host", "--target", "cpu", "--case", "real-case", "--no-report", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    [real] = Store(out / "results").load().records
    assert real.verdict == "does-not-reproduce" and real.case_hash
    forged = type(real).model_validate(
        {
            **real.model_dump(),
            **{  # what a case or a hand could write: it reproduces
                "dtype": "float16",
                "status": "fail",
                "exit_code": 1,
                "exception": "ValueError",
                "message": "v1",
                "stderr_tail": "Traceback (most recent call last):\nValueError: v1\n",
                "verdict": "reproduces",
                "why": "ValueError",
            },
        }
    )
    Store(out / "results").merge([forged])
    done = run_reprokit(root, "import", str(out / "results"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"refused cpu/{real.torch} real-case/repro@float16: not signed by a runner whose record key this machine "
        "holds: no run of this case recorded it here"
    ]
    assert [(r.dtype, r.verdict) for r in Store(root / "results").load().records] == [("float32", "does-not-reproduce")]
