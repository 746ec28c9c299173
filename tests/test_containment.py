"""Process containment: attacks from inside a run, each written here as a real case script and run by the real runner,
cold and warm. Each test asserts that the attack ran (its marker is in the output) and that its effect is absent."""

import os
import secrets
import stat
import time
from pathlib import Path

import pytest
from reprokit.run.execute import observe
from reprokit.run.warm import WarmPool

pytestmark = pytest.mark.e2e
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="only a root runner can run the case as another user")


@pytest.fixture(scope="module")
def pool():
    warm = WarmPool()
    yield warm
    warm.close()


@pytest.fixture(params=["cold", "warm"])
def run(request, tmp_path):
    """run(source, **extra_env) -> Observation: the attack written as repro.py in a folder of its own."""
    tmp_path.chmod(0o755)  # the case's folder is readable for its user, as a checkout is
    if request.param == "warm" and os.geteuid() == 0:
        pytest.skip("warm runs as root are never started (no sandbox): test_sandbox_round_five checks the refusal")

    def go(source, timeout=60, **extra):
        path = tmp_path / "repro.py"
        path.write_text(source)
        path.chmod(0o644)
        if request.param == "warm":
            warm = request.getfixturevalue("pool")
            return warm.observe(path, env=dict(os.environ), extra_env=extra, timeout=timeout)
        return observe(path, env=dict(os.environ), extra_env=extra, timeout=timeout)

    return go


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def with_marker(marker):
    """Live processes whose command line carries marker."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read() and alive(int(entry)):
                        found.append(int(entry))
            except OSError:
                continue
    return found


def _daemon_source():
    # the daemon writes one byte to fd 3 (the pipe's write end) once it runs; the script waits for it
    return """
import os, sys
MARKER = os.environ["REPRO_MARKER"]
r, w = os.pipe()
os.set_inheritable(w, True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.dup2(w, 3)
        os.execv(sys.executable, [sys.executable, "-c", "import os, time; os.write(3, b'x'); time.sleep(300)", MARKER])
    os._exit(0)
os.wait()
os.close(w)
assert os.read(r, 1) == b"x"
print("DAEMON STARTED", flush=True)
"""


SETPGID = """
import os, sys
MARKER = os.environ["REPRO_MARKER"]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)        # leaves the run's process group
    os.close(r)
    os.dup2(w, 3)
    os.execv(sys.executable, [sys.executable, "-c", "import os, time; os.write(3, b'x'); time.sleep(300)", MARKER])
os.close(w)
assert os.read(r, 1) == b"x"
print("CHILD LEFT THE GROUP", os.getpgid(pid) != os.getpgid(0), flush=True)
"""


@pytest.mark.parametrize(
    "source, started",
    [(_daemon_source(), "DAEMON STARTED"), (SETPGID, "CHILD LEFT THE GROUP True")],
    ids=["double-fork-setsid", "setpgid"],
)
def test_no_process_of_a_run_outlives_it(run, source, started):
    marker = f"reprokit-escape-{secrets.token_hex(6)}"
    try:
        obs = run(source, REPRO_MARKER=marker)
        assert started in obs.stdout_tail, obs.stderr_tail
        time.sleep(0.3)
        assert with_marker(marker) == [], "a process of the run outlived it"
    finally:
        for pid in with_marker(marker):
            os.kill(pid, 9)


def test_a_process_outliving_the_script_dies_at_the_timeout_too(run):
    marker = f"reprokit-escape-{secrets.token_hex(6)}"
    source = _daemon_source() + "import time\ntime.sleep(300)\n"
    try:
        obs = run(source, timeout=5, REPRO_MARKER=marker)
        assert obs.status == "timeout" and "DAEMON STARTED" in obs.stdout_tail
        time.sleep(0.3)
        assert with_marker(marker) == []
    finally:
        for pid in with_marker(marker):
            os.kill(pid, 9)


SIGNALS = """
import os
# the script's parent is its own probe (signalling it ends only this run); the keeper is the probe's parent
with open(f"/proc/{os.getppid()}/stat") as fh:
    keeper = int(fh.read().rsplit(")", 1)[1].split()[1])
for name, pid in (("parent", keeper), ("runner", int(os.environ["REPRO_RUNNER"]))):
    try:
        os.kill(pid, 0)
        print("SIGNALLED", name, flush=True)
    except OSError as err:
        print("REFUSED", name, type(err).__name__, flush=True)
"""


@ROOT_ONLY
def test_the_case_cannot_signal_its_runner_or_its_parent(run):
    obs = run(SIGNALS, REPRO_RUNNER=str(os.getpid()))
    out = obs.stdout_tail
    assert "REFUSED runner" in out, out
    # Inside bubblewrap the case's parent is the sandbox's first process, the case's own user in its own namespaces:
    # a signal to it can end only the case's own run (recorded as killed).
    assert "REFUSED parent" in out or "bubblewrap" in obs.contained, out


READS_ENVIRON = """
import os
for name, pid in (("parent", os.getppid()), ("runner", int(os.environ["REPRO_RUNNER"]))):
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            print("READ", name, len(fh.read()), flush=True)
    except OSError as err:
        print("REFUSED", name, type(err).__name__, flush=True)
"""


@ROOT_ONLY
def test_the_case_cannot_read_the_runners_environment(run):
    out = run(READS_ENVIRON, REPRO_RUNNER=str(os.getpid())).stdout_tail
    assert "REFUSED parent" in out and "REFUSED runner" in out, out


METADATA = """
import os
target = os.environ["REPRO_TARGET"]
for name, change in (("chmod", lambda: os.chmod(target, 0o777)), ("chown", lambda: os.chown(target, 12345, 12345)),
                     ("utime", lambda: os.utime(target, (0, 0)))):
    try:
        change()
        print("CHANGED", name, flush=True)
    except OSError as err:
        print("REFUSED", name, type(err).__name__, flush=True)
"""


@ROOT_ONLY
def test_metadata_of_files_outside_the_run_folder_cannot_change(run, tmp_path):
    target = tmp_path / "results.json"  # next to the script, so that the case can reach it
    target.write_text("{}")
    target.chmod(0o644)
    before = target.stat()
    out = run(METADATA, REPRO_TARGET=str(target)).stdout_tail
    after = target.stat()
    assert "CHANGED" not in out and out.count("REFUSED") == 3, out
    assert (stat.S_IMODE(after.st_mode), after.st_uid, after.st_gid, after.st_mtime_ns) == (
        stat.S_IMODE(before.st_mode),
        before.st_uid,
        before.st_gid,
        before.st_mtime_ns,
    )


SHM = """
import os
from multiprocessing import shared_memory
path = "/dev/shm/" + os.environ["REPRO_MARKER"]
with open(path, "w") as fh:
    fh.write("left behind")
block = shared_memory.SharedMemory(create=True, size=1 << 20)  # what torch's DataLoader and gloo rely on
block.buf[:5] = b"hello"
other = shared_memory.SharedMemory(block.name)
print("SHM WORKS", bytes(other.buf[:5]) == b"hello", flush=True)
other.close()
block.close()
block.unlink()
print("WROTE", os.path.exists(path), flush=True)
"""


@ROOT_ONLY
def test_dev_shm_works_in_a_run_and_nothing_written_there_persists(run):
    marker = f"reprokit-shm-{secrets.token_hex(6)}"
    try:
        out = run(SHM, REPRO_MARKER=marker).stdout_tail
        assert "SHM WORKS True" in out and "WROTE True" in out, out
        assert not Path("/dev/shm", marker).exists()
    finally:
        Path("/dev/shm", marker).unlink(missing_ok=True)


PROC_WRITE = """
import os
for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sysrq-trigger"):
    try:
        os.close(os.open(path, os.O_WRONLY))  # opened, nothing written
        print("OPENED", path, flush=True)
    except OSError as err:
        print("REFUSED", path, type(err).__name__, flush=True)
"""


@ROOT_ONLY
def test_proc_is_not_writable_for_the_case_on_accelerator_targets_either(run):
    out = run(PROC_WRITE, REPRO_DEVICE="cuda").stdout_tail  # a GPU target: /proc is in the run's Landlock rules
    assert "OPENED" not in out and out.count("REFUSED") == 3, out
