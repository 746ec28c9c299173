"""The runner's child process handling, with real processes that crash, hang and misbehave."""
import os
import time

import pytest
from reprokit.execute import observe, shared_header_dir
from reprokit.probe import landlock_abi

pytestmark = pytest.mark.e2e


def alive(pid):
    """True if pid runs; a zombie (killed, waiting for init to reap it) counts as gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def run(path, timeout=60, env=None):
    return observe(path, env=env or dict(os.environ), extra_env={}, timeout=timeout)


def test_exception_is_recorded_with_class_and_message(script):
    obs = run(script("raises.py"))
    assert obs.status == "fail"
    assert obs.exception == "ValueError"
    assert obs.message.startswith("the bug: shapes")
    assert obs.stage == "runtime"
    assert "Traceback" in obs.stderr_tail


def test_clean_exit_is_pass(script):
    obs = run(script("passes.py"))
    assert (obs.status, obs.exit_code, obs.stdout_tail.strip()) == ("pass", 0, "all good")


@pytest.mark.parametrize("name, sig", [("segfault.py", "SIGSEGV"), ("abort.py", "SIGABRT")])
def test_signals_are_crashes(script, name, sig):
    obs = run(script(name))
    assert (obs.status, obs.signal) == ("crash", sig)


def test_hang_is_killed_at_the_timeout(script):
    start = time.monotonic()
    obs = run(script("hang.py"), timeout=2)
    assert obs.status == "timeout"
    assert time.monotonic() - start < 30


def test_memory_cap_gives_oom(script):
    obs = run(script("memory_hog.py"))
    assert obs.status == "oom"
    assert obs.exception == "MemoryError"


def test_flood_of_output_is_truncated_with_a_note(script):
    obs = run(script("flood.py"))
    assert obs.status == "pass"
    assert obs.stdout_bytes > 100 * 1024 * 1024
    assert "earlier bytes truncated" in obs.stdout_tail
    assert obs.stdout_tail.rstrip().endswith("END OF FLOOD")
    assert len(obs.stdout_tail) < 10_000


def test_child_that_outlives_the_script_is_killed(script):
    obs = run(script("orphan.py"))
    pid = int(obs.stdout_tail.split("CHILD=")[1].split()[0])
    time.sleep(0.2)
    assert not alive(pid)


def test_secrets_do_not_reach_case_code_and_home_is_private(script, tmp_path):
    env = {**os.environ, "AWS_SECRET_ACCESS_KEY": "hunter2"}
    out = run(script("show_env.py"), env=env).stdout_tail
    assert "SECRET=<unset>" in out
    values = dict(line.split("=", 1) for line in out.splitlines())
    assert values["HOME"] != os.environ.get("HOME")
    assert values["HOME"].startswith(values["CWD"]) and values["TMP"].startswith(values["CWD"])
    assert not os.path.exists(values["CWD"])  # the private folder is removed afterwards


def test_torchrun_rank_hanging_in_a_collective_is_killed_with_all_its_processes(script):
    before = {p for p in os.listdir("/proc") if p.isdigit()}
    start = time.monotonic()
    obs = observe(script("collective_hang.py"), env=dict(os.environ), extra_env={}, timeout=20,
                  launcher="torchrun", world_size=2)
    assert obs.status == "timeout" and time.monotonic() - start < 60
    time.sleep(0.5)
    for pid in {p for p in os.listdir("/proc") if p.isdigit()} - before:
        try:
            cmdline = open(f"/proc/{pid}/cmdline").read()
        except OSError:
            continue
        assert "collective_hang.py" not in cmdline or not alive(int(pid)), f"left behind: {cmdline}"


@pytest.mark.skipif(landlock_abi() < 1, reason="this kernel has no Landlock: host runs cannot confine writes")
def test_writes_outside_the_working_directory_are_refused(script, tmp_path):
    target, victim = tmp_path / "results.json", tmp_path / "other-case-result.json"
    target.write_text("a result recorded earlier")
    victim.write_text("another case's result")
    obs = observe(script("writes_outside.py"), env=dict(os.environ), timeout=60,
                  extra_env={"REPRO_OUTSIDE": str(target), "REPRO_VICTIM": str(victim)})
    assert (obs.status, obs.exception) == ("fail", "PermissionError")
    assert "Permission denied" in obs.stderr_tail  # the child's attempt failed too
    assert target.read_text() == "a result recorded earlier" and victim.exists()
    assert obs.probes[0]["confined"] >= 1


def test_inductor_precompiled_headers_are_shared_between_runs_and_nothing_else_is(script):
    first = run(script("compiles_on_cpu.py"), timeout=300)
    assert first.status == "pass", first.stderr_tail
    shared = shared_header_dir()
    built = {p: p.stat().st_mtime_ns for p in shared.rglob("*") if p.is_file()}
    assert built, "inductor built no precompiled header in the shared folder (did torch move it?)"
    second = run(script("compiles_on_cpu.py"), timeout=300)
    assert second.status == "pass"
    assert {p: p.stat().st_mtime_ns for p in shared.rglob("*") if p.is_file()} == built  # reused, not rebuilt
    tmps = {o.stdout_tail.split("TMP=")[1].strip() for o in (first, second)}
    assert len(tmps) == 2  # each run still has its own temporary folder


def test_crash_in_interpreter_teardown_is_a_crash_as_under_plain_python(script):
    obs = run(script("crashes_at_exit.py"))
    assert (obs.status, obs.signal) == ("crash", "SIGSEGV")
    assert obs.stdout_tail.strip() == "work done"
