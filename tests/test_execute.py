"""The runner's child process handling, with real processes that crash, hang and misbehave."""

import os
import time

import pytest
from reprokit.child.landlock import landlock_abi
from reprokit.model.case import Oracle
from reprokit.model.verdict import Verdict
from reprokit.run.child_setup import shared_header_dir
from reprokit.run.execute import observe
from reprokit.run.outcome import repro_verdict

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


def with_mark(mark):
    """Live processes whose command line carries mark."""
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if mark.encode() in fh.read() and alive(int(pid)):
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_child_that_outlives_the_script_is_killed(script):
    obs = run(script("orphan.py"))
    mark = obs.stdout_tail.split("CHILD=")[1].split()[0]
    time.sleep(0.2)
    assert with_mark(mark) == []


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
    obs = observe(
        script("collective_hang.py"), env=dict(os.environ), extra_env={}, timeout=20, launcher="torchrun", world_size=2
    )
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
    obs = observe(
        script("writes_outside.py"),
        env=dict(os.environ),
        timeout=60,
        extra_env={"REPRO_OUTSIDE": str(target), "REPRO_VICTIM": str(victim)},
    )
    # Landlock refuses the write (PermissionError); inside bubblewrap the file is not even there (FileNotFoundError)
    assert obs.status == "fail" and obs.exception in ("PermissionError", "FileNotFoundError")
    assert "Permission denied" in obs.stderr_tail or "No such file" in obs.stderr_tail  # the child failed too
    assert target.read_text() == "a result recorded earlier" and victim.exists()
    assert obs.probes[0]["confined"] >= 1


@pytest.mark.heavy
def test_inductor_precompiled_headers_are_shared_between_runs_and_nothing_else_is(script):
    first = run(script("compiles_on_cpu.py"), timeout=300)
    assert first.status == "pass", first.stderr_tail
    shared = shared_header_dir()
    if os.geteuid() == 0:  # contained runs (a PID namespace each: every case is pid 2) keep their headers apart
        assert not [p for p in shared.rglob("*") if p.is_file()]
        return
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


@pytest.mark.skipif(landlock_abi() < 1, reason="this kernel has no Landlock: host runs cannot confine writes")
def test_a_module_of_the_case_folder_named_like_the_standard_library_never_runs_before_confinement(script, tmp_path):
    outside = tmp_path / "outside.txt"
    obs = observe(
        script("shadows_stdlib/repro.py"), env=dict(os.environ), timeout=60, extra_env={"REPRO_OUTSIDE": str(outside)}
    )
    assert not outside.exists(), "the case's ctypes.py ran before Landlock and wrote outside its folder"
    assert obs.status == "pass" and obs.record_fields()["confined"] >= 1
    # the script still sees sys.path as under `python repro.py`: its own folder first, not the runner's package
    assert obs.stdout_tail.strip() == f"PATH0={script('shadows_stdlib/repro.py').parent}"


def test_a_case_cannot_forge_its_verdict_by_writing_report_files(script):
    obs = run(script("forges_verdict.py"))
    assert "WROTE probe-0.json" in obs.stdout_tail  # the attempt in its own folder, where reports used to be read
    assert (obs.status, obs.exception, obs.malformed) == ("pass", None, None)
    verdict, _ = repro_verdict(Oracle(kind="raises", exception="InductorError"), obs)
    assert verdict is Verdict.DOES_NOT_REPRODUCE


def test_the_script_finds_no_descriptor_on_the_report_to_tamper_with(script):
    obs = run(script("tampers_report.py"))
    assert "TAMPERED" not in obs.stdout_tail  # the report is open in the probe's process, not the script's
    assert (obs.status, obs.malformed) == ("pass", None) and len(obs.probes) == 1


@pytest.mark.parametrize(
    "content, why",
    [
        (b"\x00 not what a probe writes", "probe-0.json: not JSON"),
        (
            b'{"exception": null, "exit_code": 0, "key": "not this run"}',
            "probe-0.json: not written by this run's probe",
        ),
        (b'{"exception": null, "exit_code": 0, "confined": 99, "owned": true, "key": "K"}', "field 'owned'"),
    ],
)
def test_a_report_that_is_not_what_the_probe_writes_is_refused_with_why(tmp_path, content, why):
    from reprokit.run.untrusted_files import read_reports

    (tmp_path / "probe-0.json").write_bytes(content)
    reports, malformed = read_reports(tmp_path, "K")
    assert reports == [] and why in malformed


def test_bad_files_in_the_run_folder_are_ignored(script):
    obs = run(script("bad_report.py"))
    assert (obs.status, obs.malformed) == ("pass", None)


def test_replacing_the_output_file_with_a_fifo_does_not_hang_the_runner(script):
    start = time.monotonic()
    obs = run(script("fifo_output.py"), timeout=30)
    assert obs.status == "pass" and time.monotonic() - start < 20
    assert "REPLACED" not in obs.stdout_tail


def test_only_allow_listed_variables_by_exact_name_reach_the_case(script):
    leaks = {
        "TORCH_SECRET_TOKEN": "x",
        "NCCL_SECRET": "x",
        "REPRO_SECRET": "x",
        "TORCHINDUCTOR_SECRET": "x",
        "NVIDIA_API_KEY": "x",
        "CUDA_VISIBLE_DEVICES": "0",
    }
    names = run(script("lists_env.py"), env={**os.environ, **leaks}).stdout_tail.split("ENV=")[1].split()[0].split(",")
    assert not set(leaks) - {"CUDA_VISIBLE_DEVICES"} & set(names)
    assert "CUDA_VISIBLE_DEVICES" in names and "PYTHONSAFEPATH" not in names and "REPROKIT_REPORT_KEY" not in names


def test_files_a_case_writes_are_capped(script):
    obs = observe(
        script("fills_disk.py"), env=dict(os.environ), timeout=60, extra_env={"REPROKIT_FILE_CAP": str(8 << 20)}
    )
    # CPython ignores SIGXFSZ: the write past the cap raises OSError (EFBIG) in the script
    assert (obs.status, obs.exception) == ("fail", "OSError") and "File too large" in obs.message
    assert "WROTE" not in obs.stdout_tail


def test_a_run_that_writes_a_folder_inside_its_own_folder_still_reads_its_script(tmp_path):
    """The fp64 check writes its captures into `<case>/capture`: the case's folder lies above a folder the run writes,
    and must still be bound (a search-path folder above a written one is not; the case's own folder always is)."""
    case = tmp_path / "case"
    capture = case / "capture"
    capture.mkdir(parents=True)
    capture.chmod(0o777)
    case.chmod(0o755)
    script = case / "repro.py"
    script.write_text("import os\nopen(os.path.join(os.environ['CAPTURE'], 'seen'), 'w').write('yes')\nprint('ran')\n")
    script.chmod(0o644)
    obs = observe(script, env=dict(os.environ), extra_env={"CAPTURE": str(capture)}, timeout=60, writable=(capture,))
    assert (obs.status, obs.stdout_tail.strip()) == ("pass", "ran"), obs.stderr_tail
    assert (capture / "seen").read_text() == "yes"
