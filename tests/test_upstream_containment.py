"""`reprokit upstream` runs case code contained, as `reprokit run` does, and reads what the case left as untrusted.

Each attack that once worked against it is a test: the runner's environment holds a GitHub token and cloud keys, and
nothing of them may reach any file `upstream` writes (the report meant to be posted publicly, its zips); a link or a
FIFO planted by the case is never followed or opened; a case cannot kill an unrelated process or leave a daemon."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
SECRETS = {
    "GITHUB_TOKEN": "ghp_test0123456789abcdefSECRETtoken",
    "AWS_SECRET_ACCESS_KEY": "awsSECRET/abc123+xyz",
    "AWS_ACCESS_KEY_ID": "AKIATESTSECRETKEYID",
}
CASE_YAML = """id: {id}
title: An attack on the upstream runner, then a failure of torch's own
category: diagnosis
requires: {{timeout: 120}}
expect:
  repro: {{kind: nonzero-exit}}
"""
FAIL = "\ntorch.ones(2, 3) @ torch.ones(2, 3)  # fails in torch's matmul (shapes), after the attack\n"


def repo_with_case(tmp_path, case_id, script):
    (tmp_path / "matrix.yaml").write_bytes((ROOT / "matrix.yaml").read_bytes())
    folder = tmp_path / "cases" / case_id
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(CASE_YAML.format(id=case_id))
    (folder / "repro.py").write_text(textwrap.dedent(script) + FAIL)
    return tmp_path, folder


def upstream(repo, case_id, *extra, timeout=600):
    env = {**os.environ, **SECRETS, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(repo),
            "upstream",
            case_id,
            "--force",
            "--report-dir",
            str(repo / "out"),
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def written_bytes(folder):
    """Every file under folder, zips opened: (name, bytes)."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        yield str(path), path.read_bytes()
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as zf:
                for name in zf.namelist():
                    yield f"{path}!{name}", zf.read(name)


def assert_no_secret(folder):
    found = list(written_bytes(folder))
    assert found, "upstream wrote nothing to check"
    for name, data in found:
        for key, value in SECRETS.items():
            assert value.encode() not in data, f"{key} leaked into {name}"


def test_a_minified_repro_linked_to_the_environment_is_refused_in_upstream_and_validate(tmp_path):
    repo, folder = repo_with_case(tmp_path, "link-minified", "import torch\n")
    (folder / "minified_repro.py").symlink_to("/proc/self/environ")
    proc = upstream(repo, "link-minified")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "minified_repro.py: a link; only a regular file inside the case folder is read" in proc.stderr
    for value in SECRETS.values():
        assert value not in proc.stdout + proc.stderr
    assert not any((repo / "out").rglob("*")) if (repo / "out").exists() else True
    checked = subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(repo), "validate"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
    )
    assert checked.returncode == 1 and "minified_repro.py: a link" in checked.stdout


ENVIRON_THIEF = """
import os
import torch

for path in ("/proc/self/environ", "/proc/1/environ", f"/proc/{os.getppid()}/environ"):
    try:
        print(path, open(path).read())
    except OSError as err:
        print(path, "refused:", err)
print("environment:", dict(os.environ))
os.symlink(f"/proc/{os.getppid()}/environ", "stdout.txt")  # what upstream once read back as the run's stdout
os.symlink("/proc/self/environ", "stderr.txt")
"""


def test_the_runner_s_environment_reaches_no_written_file(tmp_path):
    repo, _ = repo_with_case(tmp_path, "environ-thief", ENVIRON_THIEF)
    proc = upstream(repo, "environ-thief")
    assert proc.returncode == 0, proc.stderr
    body = (repo / "out" / "environ-thief.md").read_text()
    assert "environment: {" in body  # the case ran and printed what it could see: the allow-list only
    assert "REPRO_DEVICE" in body and "ghp_" not in body
    assert_no_secret(repo / "out")


TRACE_PLANTER = """
import os
import torch

trace = os.environ.get("TORCH_TRACE")
if trace:  # the traced run: plant links and a FIFO among the logs
    os.symlink("/etc/shadow", os.path.join(trace, "shadow.log"))
    os.symlink("/proc/1/environ", os.path.join(trace, "init-environ.log"))
    os.mkfifo(os.path.join(trace, "hang.log"))
    os.mkdir(os.path.join(trace, "sub"))
    with open(os.path.join(trace, "planted.log"), "w") as fh:
        fh.write("a regular log the case wrote\\n")
os.mkfifo("stdout.txt")  # a FIFO where upstream once read the run's stdout: it blocked forever
"""


@pytest.mark.heavy
def test_links_and_fifos_in_the_trace_folder_are_neither_followed_nor_opened(tmp_path):
    repo, _ = repo_with_case(tmp_path, "trace-planter", TRACE_PLANTER)
    started = time.monotonic()
    proc = upstream(repo, "trace-planter", timeout=400)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 400
    with zipfile.ZipFile(repo / "out" / "trace-planter-trace.zip") as zf:
        names = zf.namelist()
        contents = b"".join(zf.read(n) for n in names)
    assert "planted.log" in names
    assert not {"shadow.log", "init-environ.log", "hang.log", "sub"} & set(names)
    shadow_head = Path("/etc/shadow").read_bytes()[:12]
    assert shadow_head and shadow_head not in contents
    # the trace folder is a tmpfs inside the sandbox: only its regular files come out (child/outbox.py), so the links
    # and the FIFO never reach the host folder the bundle is made from (the zip above holds the regular log alone)
    assert_no_secret(repo / "out")


def processes_with(marker):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_the_case_cannot_kill_an_unrelated_process_or_leave_a_daemon(tmp_path):
    bystander = subprocess.Popen(["sleep", "600"])
    marker = "777.25"  # the daemon's argument: finds it, and only it, among this machine's processes
    script = f"""
    import os
    import subprocess
    import torch

    try:
        os.kill({bystander.pid}, 9)
        print("killed the bystander")
    except OSError as err:
        print("could not kill the bystander:", err)
    if os.fork() == 0:  # a double-forked daemon in a session of its own
        os.setsid()
        subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
        os._exit(0)
    """
    repo, _ = repo_with_case(tmp_path, "daemon-leaver", script)
    try:
        proc = upstream(repo, "daemon-leaver")
        assert proc.returncode == 0, proc.stderr
        time.sleep(1)
        assert bystander.poll() is None, "the case killed a process outside its run"
        assert processes_with(f"sleep\0{marker}".encode()) == [], "a daemon of the case outlived upstream"
        assert "could not kill the bystander" in (repo / "out" / "daemon-leaver.md").read_text()
        assert_no_secret(repo / "out")
    finally:
        for pid in processes_with(f"sleep\0{marker}".encode()):
            os.kill(pid, signal.SIGKILL)
        bystander.kill()
        bystander.wait()
