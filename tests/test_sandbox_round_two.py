"""Sandbox, round two: each attack that got through the last audit, written here as a real case script (or a real
input file) and run by the real runner. Each test asserts that the attack ran and that its effect is absent."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from reprokit.model.untrusted_text import recordable
from reprokit.run.child_setup import MEMORY_BUDGET, budget
from reprokit.run.execute import observe
from reprokit.run.outcome import repro_verdict
from reprokit.store.store import Store
from support import case_script, record

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces, tmpfs budgets and cgroups need a root runner")
SECRET = {"GITHUB_TOKEN": "ghp_sandboxroundtwo0000000000000000", "AWS_SECRET_ACCESS_KEY": "aws-round-two-secret"}


def run(path: Path, timeout: float = 60, env: dict | None = None, **extra):
    return observe(path, env={**os.environ, **SECRET, **(env or {})}, extra_env=extra, timeout=timeout)


SHM_WRITE = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
seg = libc.shmget(0x5EC2E7, 1 << 20, 0o1666)  # IPC_CREAT, readable by anyone
addr = libc.shmat(seg, None, 0)
ctypes.memmove(addr, b"left by run A", 13)
print("WROTE", seg)
"""
SHM_READ = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
seg = libc.shmget(0x5EC2E7, 0, 0)
if seg < 0:
    print("NO SEGMENT")
else:
    print("FOUND", ctypes.string_at(libc.shmat(seg, None, 0), 13))
"""


@ROOT_ONLY
def test_a_sysv_segment_of_one_run_is_gone_for_the_next(tmp_path):
    first = run(case_script(tmp_path, SHM_WRITE))
    assert "WROTE" in first.stdout_tail and "ipc namespace" in first.contained
    second = run(case_script(tmp_path, SHM_READ))
    assert "NO SEGMENT" in second.stdout_tail, second.stdout_tail
    ipcs = subprocess.run(["cat", "/proc/sysvipc/shm"], capture_output=True, text=True).stdout
    assert str(0x5EC2E7) not in ipcs  # nor does it outlive the run on the host


def listener_on_loopback():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    return server


@ROOT_ONLY
def test_case_code_reaches_no_listener_of_the_host_not_even_on_loopback(tmp_path):
    server = listener_on_loopback()
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0reprokit-round-two")
    abstract.listen(1)
    abstract.settimeout(0.2)
    port = server.getsockname()[1]
    try:
        obs = run(
            case_script(
                tmp_path,
                f"""
import socket
for family, address in ((socket.AF_INET, ("127.0.0.1", {port})), (socket.AF_UNIX, "\\0reprokit-round-two")):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(address)
        print("CONNECTED", address)
    except OSError as err:
        print("REFUSED", type(err).__name__)
# its own loopback works (torchrun's rendezvous and gloo use it)
own = socket.socket(); own.bind(("127.0.0.1", 0)); own.listen(1)
c = socket.create_connection(own.getsockname(), timeout=2); print("OWN LOOPBACK OK")
""",
            )
        )
        for sock in (server, abstract):
            with pytest.raises(TimeoutError):
                sock.accept()  # nothing arrived
    finally:
        server.close()
        abstract.close()
    assert obs.stdout_tail.count("REFUSED") == 2 and "CONNECTED" not in obs.stdout_tail, obs.stdout_tail
    assert "OWN LOOPBACK OK" in obs.stdout_tail
    assert "network namespace (loopback only)" in obs.contained


@ROOT_ONLY
def test_the_run_folder_has_a_total_disk_budget_and_a_run_over_it_is_recorded_as_such(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_DISK_BUDGET", "64M")  # the runner's setting
    obs = run(
        case_script(
            tmp_path,
            """
import os
written = 0
for i in range(3):  # three files of 1 GiB, each under the per-file cap
    try:
        with open(f"big{i}", "wb") as fh:
            for _ in range(1024):
                fh.write(b"x" * (1 << 20))
                written += 1 << 20
    except OSError as err:
        print("STOPPED", err.errno)
        break
print("WROTE MiB", written >> 20)
""",
        ),
        timeout=120,
    )
    assert "STOPPED" in obs.stdout_tail
    assert int(obs.stdout_tail.split("WROTE MiB")[1].split()[0]) <= 64
    assert obs.status == "over-budget" and obs.over_budget == "disk 64 MiB"
    assert "disk budget 64 MiB" in obs.contained
    verdict, why = repro_verdict(yaml_oracle("{kind: raises, exception: OSError}"), obs)
    assert (verdict.value, why) == ("fails-differently", "over its disk 64 MiB budget")


@ROOT_ONLY
def test_memory_is_bounded_by_a_cgroup_and_a_run_over_it_is_recorded_as_such(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_MEMORY_BUDGET", "256M")
    obs = run(
        case_script(
            tmp_path,
            """
blocks = []
print("ALLOCATING", flush=True)
for _ in range(64):
    blocks.append(bytearray(16 << 20))  # touched: 1 GiB in all
print("ALLOCATED ALL")
""",
        ),
        timeout=120,
    )
    assert "ALLOCATING" in obs.stdout_tail and "ALLOCATED ALL" not in obs.stdout_tail
    if "memory budget" not in (obs.contained or ""):
        pytest.skip(f"no memory cgroup can be made here (held: {obs.contained})")
    assert obs.status == "over-budget" and obs.over_budget == "memory 256 MiB"
    assert budget("REPROKIT_MEMORY_BUDGET", MEMORY_BUDGET, {}) == MEMORY_BUDGET


def yaml_oracle(text):
    from reprokit.model.case import Oracle

    return Oracle.model_validate(yaml.safe_load(text))


def test_an_exception_message_holding_a_lone_surrogate_is_recorded_not_fatal(tmp_path):
    obs = run(case_script(tmp_path, 'raise RuntimeError("bad \\udc80 byte \\x1b[31m and a bell \\x07")\n'))
    assert obs.exception == "RuntimeError" and "\ufffd" in obs.message and "\x07" not in obs.message
    store = Store(tmp_path / "results")
    rec = record(
        case="c",
        verdict="fails-differently",
        message=obs.message,
        stderr_tail=obs.stderr_tail,
        exception=obs.exception,
        status=obs.status,
    )
    store.merge([rec])  # writing the store (and a journal line, the same dump) no longer raises
    assert store.load().records[0].message == obs.message
    assert recordable("x\udc80") == "x\ufffd"


def repo_with_case(tmp_path: Path, case_id: str, case_yaml: str, repro: str = "print('ok')\n") -> Path:
    root = tmp_path / "repo"
    (root / "cases" / case_id).mkdir(parents=True)
    (root / "matrix.yaml").write_text((ROOT / "matrix.yaml").read_text())
    (root / "cases" / case_id / "case.yaml").write_text(case_yaml)
    (root / "cases" / case_id / "repro.py").write_text(repro)
    return root


def reprokit(root: Path, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-P", "-m", "reprokit", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **SECRET, **(env or {})},
        cwd=root,
    )


CASE_YAML = """id: {id}
title: t
category: diagnosis
expect:
  repro: {{kind: raises, exception: RuntimeError, match: {match!r}}}
"""


def test_an_oracle_the_regex_engine_rejects_is_one_validation_line_and_never_crashes_run(tmp_path):
    root = repo_with_case(
        tmp_path, "fuzzy-match", CASE_YAML.format(id="fuzzy-match", match="boom{e<}"), "raise RuntimeError('boom')\n"
    )
    done = reprokit(root, "validate")
    lines = [ln for ln in done.stdout.splitlines() if "fuzzy-match" in ln]
    assert done.returncode == 1 and len(lines) == 1 and "match is not a valid regex" in lines[0], done.stdout
    ran = reprokit(root, "run", "--host", "--target", "cpu", "--out", str(tmp_path / "out"), "--no-report")
    assert "Traceback" not in ran.stderr and "match is not a valid regex" in ran.stderr


def test_a_case_folder_named_like_a_workflow_command_prints_no_command_line(tmp_path):
    name = "x\n::error title=pwned::owned"
    root = repo_with_case(tmp_path, "fine-case", CASE_YAML.format(id="fine-case", match="x"))
    evil = root / "cases" / name
    evil.mkdir()
    (evil / "case.yaml").write_text(CASE_YAML.format(id="evil", match="x"))
    (evil / "repro.py").write_text("print(1)\n")
    outputs = [
        reprokit(root, "list"),
        reprokit(root, "validate"),
        reprokit(root, "run", "--host", "--target", "cpu", "--case", "nothing-*", "--out", str(tmp_path / "o")),
    ]
    for done in outputs:
        text = done.stdout + done.stderr
        assert "pwned" in text  # the folder was reported ...
        assert not [ln for ln in text.splitlines() if ln.lstrip().startswith("::")], text  # ... as data


def test_import_refuses_records_whose_target_or_suite_or_torch_is_a_path(tmp_path):
    good = record(case="c", verdict="reproduces")
    for field, value in (("target", "../imp-escape2"), ("suite", "../../x"), ("torch", "../../../escape")):
        source = tmp_path / f"src-{field}"
        (source / "cpu" / "cases").mkdir(parents=True)
        line = json.loads(good.model_dump_json())
        line[field] = value
        (source / "cpu" / "cases" / "2.13.0.jsonl").write_text(json.dumps(line) + "\n")
        root = repo_with_case(tmp_path / field, "c", CASE_YAML.format(id="c", match="x"))
        done = reprokit(root, "import", str(source))
        assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
        assert field in done.stderr
        escaped = [p for p in tmp_path.rglob("*") if "escape" in p.name or p.name == "x"]
        assert not escaped and not (root / "results").exists()
    with pytest.raises(Exception, match="not a target name"):
        Store(tmp_path / "store").file("../up", "cases", "2.13.0")


def test_nothing_of_the_repository_root_is_imported_by_an_interpreter_the_runner_starts(tmp_path):
    root = repo_with_case(tmp_path, "plain", CASE_YAML.format(id="plain", match="x"), "print('plain')\n")
    marker = tmp_path / "PLATFORM_RAN"
    for name in ("platform.py", "json.py", "subprocess.py"):  # what collect_env and the facts script import
        (root / name).write_text(f"open({str(marker)!r}, 'a').write(__name__ + ' ran\\n')\nraise SystemExit(3)\n")
    done = reprokit(root, "run", "--host", "--target", "cpu", "--out", str(tmp_path / "out"), "--no-report")
    assert not marker.exists(), marker.read_text()
    assert "1 does-not-reproduce" in done.stdout, done.stdout + done.stderr[-2000:]  # it ran, with no module of root


def test_the_keeper_and_the_case_die_with_a_runner_killed_outright(tmp_path):
    marker = f"reprokit-orphan-{os.getpid()}"
    root = repo_with_case(
        tmp_path,
        "sleeper",
        CASE_YAML.format(id="sleeper", match="x"),
        f"import time  # {marker}\nprint('SLEEPING', flush=True)\ntime.sleep(600)\n",
    )
    runner = subprocess.Popen(
        [
            sys.executable,
            "-P",
            "-m",
            "reprokit",
            "--root",
            str(root),
            "run",
            "--host",
            "--target",
            "cpu",
            "--out",
            str(tmp_path / "out"),
            "--no-report",
            "--timeout",
            "600",
        ],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not running_with(marker):
        time.sleep(0.5)
    assert running_with(marker), "the case never started"
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and running_with(marker):
        time.sleep(0.25)
    assert not running_with(marker), "the case outlived its runner"


def running_with(text: str) -> list[int]:
    """Live processes whose command line or open script names text (the case runs as `probe.py .../repro.py`)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and b"probe.py" in cmdline and b"sleeper" in cmdline:
            found.append(int(entry))
    return found


def test_the_observation_key_is_in_no_environment_a_case_process_can_read(tmp_path):
    obs = run(
        case_script(
            tmp_path,
            """
import os
found = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                block = fh.read()
        except OSError:
            continue
        if b"REPROKIT_REPORT_KEY" in block or b"REPROKIT_KEY_FD" in block and b"REPROKIT_REPORT_KEY" in block:
            found.append(pid)
print("READABLE ENVIRONMENTS WITH THE KEY:", found)
pipes = []
for fd in os.listdir("/proc/self/fd"):
    try:
        if int(fd) > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
            with open(f"/proc/self/fdinfo/{fd}") as info:  # the key comes on a pipe's read end
                flags = int(next(line for line in info if line.startswith("flags:")).split()[1], 8)
            if flags & 3 != os.O_WRONLY:  # the one write end is the channel to the probe
                pipes.append(fd)
    except OSError:
        pass
print("KEY PIPES OPEN:", pipes)
""",
        )
    )
    assert "READABLE ENVIRONMENTS WITH THE KEY: []" in obs.stdout_tail, obs.stdout_tail
    assert "KEY PIPES OPEN: []" in obs.stdout_tail  # the script's process closed the key's descriptor unread
    assert obs.status == "pass" and not obs.malformed  # the probe still read the key and reported


def test_a_torchrun_rank_holds_no_key_in_its_environment_either(tmp_path):
    path = case_script(
        tmp_path,
        """
import os
with open("/proc/self/environ", "rb") as fh:
    found = b"REPROKIT_REPORT_KEY" in fh.read()
os.write(1, f"RANK {os.environ.get('RANK')} KEY IN ENVIRON {found}\\n".encode())  # one write: the ranks share stdout
""",
    )
    obs = observe(path, env={**os.environ, **SECRET}, extra_env={}, timeout=180, launcher="torchrun", world_size=2)
    assert obs.stdout_tail.count("KEY IN ENVIRON False") == 2, obs.stdout_tail + obs.stderr_tail
    assert obs.status == "pass" and not obs.malformed and len(obs.probes) == 2


@pytest.mark.heavy
def test_a_cache_entry_one_case_writes_is_never_read_by_another_case(tmp_path):
    """--cache DIR: each run writes only its own folder of DIR (case/variant@dtype)."""
    root = tmp_path / "repo"
    (root / "cases").mkdir(parents=True)
    (root / "matrix.yaml").write_text((ROOT / "matrix.yaml").read_text())
    for case_id, repro in (
        (
            "a-attacker",
            """
import os
cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
top = os.path.dirname(os.path.dirname(os.path.dirname(cache)))  # DIR
planted = 0
for folder, dirs, files in os.walk(top):
    for name in ("inductor", "triton", "."):
        try:
            os.makedirs(os.path.join(folder, name), exist_ok=True)
            with open(os.path.join(folder, name, "poisoned"), "w") as fh:
                fh.write("attacker code")
            planted += 1
        except OSError:
            pass
print("PLANTED", planted)
""",
        ),
        (
            "b-benign",
            """
import os
cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
if os.path.exists(os.path.join(cache, "poisoned")) or os.path.exists(os.path.join(os.path.dirname(cache), "poisoned")):
    raise RuntimeError("ran a poisoned cache entry")
print("CLEAN CACHE")
""",
        ),
    ):
        (root / "cases" / case_id).mkdir()
        (root / "cases" / case_id / "case.yaml").write_text(CASE_YAML.format(id=case_id, match="poisoned"))
        (root / "cases" / case_id / "repro.py").write_text(repro)
    cache = tmp_path / "cache"
    for case_id in ("b-benign", "a-attacker", "b-benign"):  # b's folder exists before a runs
        reprokit(
            root,
            "run",
            "--host",
            "--target",
            "cpu",
            "--case",
            case_id,
            "--cache",
            str(cache),
            "--out",
            str(tmp_path / "out"),
            "--no-report",
            "--jobs",
            "1",
        )
    recs = {r.case: r for r in Store(tmp_path / "out" / "results").load().records}
    assert "PLANTED" in recs["a-attacker"].stdout_tail
    assert recs["b-benign"].verdict.value == "does-not-reproduce", recs["b-benign"].why
    assert not list((cache / "b-benign").rglob("poisoned"))
