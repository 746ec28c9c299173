"""The contributor's loop without traps (issue 52): each step says what it did, what it did not, and the one command
that goes on; a run of one case changes only what that case changes."""

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from reprokit.cli import build_parser
from reprokit.contrib import bisection
from reprokit.contrib.bisection_answer import Seen
from reprokit.model import corpus
from reprokit.model.matrix import load_matrix
from reprokit.model.verdict import Verdict
from support import empty_repository, interpreters, run_reprokit, uv_layout

pytestmark = pytest.mark.e2e
CONTRIB = Path(__file__).parent / "fixtures" / "contrib"
PIN = "2.14.1"  # cpu's pin in matrix.yaml: the torch of the environment the tests run in


@pytest.fixture
def repo(tmp_path):
    return empty_repository(tmp_path)


def new_case(repo: Path, case: str = "first-run") -> None:
    made = run_reprokit(
        repo, "new-case", case, "--from", str(CONTRIB / "printed_dtype.py"), "--stdout", r"result dtype: torch\.int64"
    )
    assert made.returncode == 0, made.stderr


# a. --update-expected says when it accepts nothing, and the hint repeats --torch


def test_update_expected_on_another_torch_than_the_pin_is_refused_before_the_run_naming_the_pin_command(repo):
    matrix = repo / "matrix.yaml"
    matrix.write_text(matrix.read_text().replace(f'pins: {{torch: "{PIN}"', 'pins: {torch: "2.13.0"', 1))
    new_case(repo)
    ran = run_reprokit(
        repo,
        "run",
        "--host",
        "--target",
        "cpu",
        "--case",
        "first-run",
        "--update-expected",
        "--out",
        str(repo / "elsewhere"),
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr  # bad input, said before anything ran
    assert ran.stderr.startswith(f"reprokit: --update-expected: torch {PIN}") and "Traceback" not in ran.stderr
    assert ran.stderr.rstrip().endswith(
        "would run, not cpu's pin 2.13.0; nothing could be accepted: reprokit run --target cpu --torch 2.13.0 "
        f"--case first-run --out {repo / 'elsewhere'} --update-expected"
    ), ran.stderr
    assert not (repo / "elsewhere").exists() and not (repo / "expected" / "cpu.yaml").exists()


def test_a_new_cases_first_run_off_the_pin_prints_the_pin_command_and_names_the_page_it_lands_on(repo):
    """A run on a torch other than the pin, into an --out store that holds the pinned release: its verdicts are
    history (reports/cpu-history.md, not cpu.md), and the line that pins the new case keeps --out and names the pin."""
    from reprokit.store.store import Store
    from support import record

    matrix = repo / "matrix.yaml"
    matrix.write_text(matrix.read_text().replace(f'pins: {{torch: "{PIN}"', 'pins: {torch: "2.13.0"', 1))
    new_case(repo)
    out = repo / "elsewhere"
    Store(out / "results").merge(
        [record(case="older", torch="2.13.0", verdict="does-not-reproduce", case_hash="0" * 16)]
    )
    ran = run_reprokit(repo, "run", "--host", "--target", "cpu", "--case", "first-run", "--out", str(out))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (
        "pin the new ones on the pinned torch (then commit expected/cpu.yaml with the case): reprokit run "
        f"--target cpu --torch 2.13.0 --case first-run --out {out} --update-expected"
    ) in ran.stdout, ran.stdout
    assert ran.stdout.rstrip().splitlines()[-1] == "  report: elsewhere/reports/cpu-history.md", ran.stdout


def test_the_pin_hint_after_a_torch_run_keeps_torch(repo):
    new_case(repo)
    ran = run_reprokit(repo, "run", "--host", "--target", "cpu", "--torch", PIN, "--case", "first-run")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (
        f"pin it as the expected state (then commit expected/cpu.yaml with the case): reprokit run --target cpu "
        f"--torch {PIN} --case first-run --update-expected"
    ) in ran.stdout, ran.stdout


# f. every sub-command's --help describes it; every --target says what it is


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_help_describes_the_command_and_every_target_option_has_help():
    undescribed = [name for name, parser in _commands().items() if name != "run-request" and not parser.description]
    assert undescribed == []
    bare = [
        name
        for name, parser in _commands().items()
        for action in parser._actions
        if "--target" in action.option_strings and not action.help
    ]
    assert bare == []


def test_validate_help_says_what_it_checks_and_how_it_exits():
    shown = run_reprokit(Path.cwd(), "validate", "--help")
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    assert "case.yaml" in text and "claims.yaml" in text and "exits 1 when there is any" in text, text


# b. a run of one case changes only that case's entries and the pages that show a change

NOTED = (
    "# kept by hand: this comment stays\n"
    "other-case/repro@float32:\n"
    "  verdict: reproduces\n"
    "  recorded_on: AMD EPYC 7763 64-Core Processor\n"
    "  machine_dependent: its input matrix is singular, so the condition number is rounding noise that differs by\n"
    "    CPU\n"
    "zz-last/repro@float32: fix-works\n"
)


def test_update_expected_rewrites_only_the_entries_of_the_cases_it_ran(repo):
    new_case(repo)
    path = repo / "expected" / "cpu.yaml"
    path.parent.mkdir()
    path.write_text(NOTED)
    ran = run_reprokit(repo, "run", "--host", "--target", "cpu", "--case", "first-run", "--update-expected")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = NOTED.splitlines(keepends=True)
    assert path.read_text() == "".join(lines[:1] + ["first-run/repro@float32: reproduces\n"] + lines[1:])


def test_a_second_run_of_one_case_rewrites_no_page_it_does_not_change(repo):
    new_case(repo)
    first = run_reprokit(repo, "run", "--host", "--target", "cpu", "--case", "first-run", "--no-ladder")
    assert first.returncode == 0 and "wrote reports/heatmap.png" in first.stdout, first.stdout + first.stderr
    pages = sorted(p for p in (repo / "reports").rglob("*") if p.is_file())
    before = {p: p.stat().st_mtime_ns for p in pages}
    again = run_reprokit(repo, "run", "--host", "--target", "cpu", "--case", "first-run", "--no-ladder")
    assert again.returncode == 0, again.stdout + again.stderr
    rewritten = {p.relative_to(repo).as_posix() for p in pages if p.stat().st_mtime_ns != before[p]}
    said = {line.removeprefix("wrote ") for line in again.stdout.splitlines() if line.startswith("wrote ")}
    assert "reports/heatmap.png" not in rewritten and "reports/cpu/badge.json" not in rewritten, rewritten
    assert said == rewritten, (said, rewritten)
    assert "  report: reports/cpu.md" in again.stdout


# c. new-case says the oracle it writes as case.yaml writes it, and says so when it chose the default


def test_new_case_prints_the_proposed_oracle_as_the_yaml_it_writes(repo, tmp_path):
    script = tmp_path / "raises_shape.py"
    script.write_text('raise ValueError("view.size mismatch + cannot reshape a.b (2, 3)")\n')
    made = run_reprokit(repo, "new-case", "shaped", "--from", str(script))
    assert made.returncode == 0, made.stdout + made.stderr
    line = next(ln for ln in made.stdout.splitlines() if ln.startswith("oracle from that run"))
    written = yaml.safe_load((repo / "cases" / "shaped" / "case.yaml").read_text())["expect"]["repro"]
    assert line.startswith("oracle from that run (case.yaml expect.repro): {kind: raises"), line
    assert yaml.safe_load(line.split(": ", 1)[1]) == written and "\\\\" not in line, (line, written)
    assert written["match"] == r"view\.size\ mismatch\ \+\ cannot\ reshape\ a\.b", written


def test_new_case_of_a_passing_script_says_it_chose_nonzero_exit_and_why(repo):
    made = run_reprokit(
        repo, "new-case", "passing", "--from", str(Path(__file__).parent / "fixtures" / "scripts" / "passes.py")
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert (
        "oracle: {kind: nonzero-exit}, the default: the script exited 0 here, so this run suggests none; "
        "if the bug is in what it prints or computes, give --stdout/--stderr REGEX or --wrong-result"
    ) in made.stdout, made.stdout


# d. bisect: the retry after a timeout says what is measured, the answer is printed once, SIGTERM cleans up


def test_a_timed_out_release_asks_for_what_finished_runs_took_or_says_the_need_is_unknown():
    killed = Seen(Verdict.TIMEOUT, "killed after 3 s")
    never = bisection.search(["2.12.1", "2.13.0", "2.14.1"], {}, lambda version: killed)
    never.timeout = 1
    retry = never.answer().retry
    assert "--timeout 6" not in retry and "what the script needs is unknown" in retry, retry
    assert "it was killed after 3 s" in retry
    finished = {"2.12.1": killed, "2.13.0": Seen(Verdict.REPRODUCES, "stdout matches", 40.0), "2.14.1": killed}
    measured = bisection.search(list(finished), {}, finished.get)
    measured.timeout = 1
    assert "run again with --timeout 60 (the runs that finished took up to 40 s)" in measured.answer().retry


def test_the_bisect_answer_is_printed_once_without_the_inner_runs_gate_lines(repo, tmp_path):
    releases = interpreters(tmp_path / "releases", 2)
    done = run_reprokit(
        repo,
        "bisect",
        "--target",
        "cpu",
        "--from",
        str(CONTRIB / "printed_dtype.py"),
        "--stdout",
        r"result dtype: torch\.int64",
        "--versions",
        *releases,
        env={"REPROKIT_CACHE": str(tmp_path / "cache")},
    )
    answers = [line for line in done.stdout.splitlines() if line.startswith(f"{CONTRIB / 'printed_dtype.py'} on cpu: ")]
    assert len(answers) == 1, done.stdout + done.stderr
    assert "not the pinned" not in done.stdout and "summary:" not in done.stdout, done.stdout


def test_a_bisect_stopped_by_sigterm_deletes_its_scratch_repository(repo, tmp_path):
    script = tmp_path / "sleeps.py"
    script.write_text("import time\ntime.sleep(20)\n")
    scratch_parent = tmp_path / "tmp"
    scratch_parent.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "tools"),
        "TMPDIR": str(scratch_parent),
        "REPROKIT_CACHE": str(tmp_path / "cache"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "reprokit", "--root", str(repo), "bisect", "--target", "cpu", "--from", str(script)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in proc.stdout:
        if "scratch repository" in line:
            break
    time.sleep(2)  # the script's first contained run has started
    assert list(scratch_parent.glob("reprokit-bisect-*"))
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) != 0
    assert not list(scratch_parent.glob("reprokit-bisect-*"))


# e. envs says what removing each environment frees; the disk estimate is measured from a built environment


def test_envs_lists_what_removing_each_environment_frees(tmp_path):
    cache = tmp_path / "cache"
    uv_layout(cache)
    (cache / "envs" / "torch-2.9.1").mkdir()  # an older release, whose name sorts after 2.10.0 as text
    (cache / "envs" / "torch-2.9.1" / ".complete").write_text("torch 2.9.1\n")
    listed = run_reprokit(tmp_path, "envs", env={"REPROKIT_CACHE": str(cache)})
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split()[1:] for line in listed.stdout.splitlines() if line.strip()}
    assert rows["torch"] == ["size", "frees"]
    assert rows["2.10.0"] == ["64.0", "MiB", "48.0", "MiB"] and rows["2.11.0"] == ["16.0", "MiB", "4.0", "KiB"], (
        listed.stdout
    )  # its .complete alone
    assert list(rows)[1:4] == ["2.9.1", "2.10.0", "2.11.0"], listed.stdout  # oldest release first
    removed = run_reprokit(tmp_path, "envs", "--remove", "2.10.0", env={"REPROKIT_CACHE": str(cache)})
    assert "freed 48.0 MiB" in removed.stdout, removed.stdout
    again = run_reprokit(tmp_path, "envs", env={"REPROKIT_CACHE": str(cache)})
    assert "2.10.0" not in again.stdout and "2.11.0" in again.stdout  # a changed cache is measured again


def test_envs_of_an_unchanged_cache_walks_none_of_it_again(tmp_path, monkeypatch):
    """The listing is measured once per state of the cache: listed again, nothing is walked (40-120 s on a 26 GB
    cache each time before)."""
    from reprokit.run import env_cache

    monkeypatch.setenv("REPROKIT_CACHE", str(tmp_path / "cache"))
    uv_layout(tmp_path / "cache")
    first = env_cache.table()

    def no_walk(*args, **kwargs):
        raise AssertionError("the cache was walked again")

    monkeypatch.setattr(env_cache.os, "walk", no_walk)
    assert env_cache.table() == first


def test_the_disk_estimate_is_what_each_built_environment_holds_of_its_own(tmp_path, monkeypatch):
    """2.10.0 holds 48 MiB no other environment links, 2.11.0 only its marker: each took the median of the two, in
    GiB/MiB as measured, and the download is said to be at most that."""
    from reprokit.run import torch_envs

    monkeypatch.setenv("REPROKIT_CACHE", str(tmp_path / "cache"))
    uv_layout(tmp_path / "cache")
    said = torch_envs.estimate(2)
    assert said.startswith(
        "about 48.0 MiB of disk, 24.0 MiB each: the median of what each of the 2 environments here holds of its own"
    ), said
    assert "downloads each release's torch" in said and "at most that much" in said


# g. new-case suggests the target whose GPU is here; a case's own dtype runs wherever its device computes in it

H200 = {
    "device_kind": "cuda",
    "device_name": "NVIDIA H200",
    "compute_capability": 9.0,
    "device_count": 1,
    "torch": PIN,
}  # what the case interpreter's torch reports on the H200 machine (run/environment.py)


def test_new_case_of_a_cuda_script_suggests_the_target_of_the_gpu_here_or_says_none_matches(repo, tmp_path):
    script = tmp_path / "on_cuda.py"
    script.write_text('import torch\n\nprint(torch.ones(2, device="cuda").sum())\n')
    made = run_reprokit(repo, "new-case", "on-cuda", "--from", str(script), "--nonzero-exit")
    assert made.returncode == 0, made.stdout + made.stderr
    assert (
        "next: reprokit run --target a10 --case on-cuda (on a machine with its device: no accelerator here "
        "matches no cuda target of matrix.yaml)"
    ) in made.stdout, made.stdout  # this machine has no GPU
    from reprokit.contrib import case_target  # (new with the fix: the module says which target is this machine's)

    targets = load_matrix(repo / "matrix.yaml").targets
    assert case_target.target_to_run(targets, repo / "cases" / "on-cuda", H200) == (
        "h100",
        "this machine's NVIDIA H200 is a h100 device",
    )


def test_a_script_that_fixes_float64_runs_in_it_on_gpu_targets_that_test_no_float64(repo):
    made = run_reprokit(
        repo, "new-case", "mean64", "--from", str(CONTRIB / "float64_mean.py"), "--no-run", "--devices", "cpu,cuda,npu"
    )
    assert made.returncode == 0, made.stdout + made.stderr
    (case,) = corpus.discover(repo / "cases")
    assert case.case.requires.dtypes == ["float64"]
    targets = load_matrix(repo / "matrix.yaml").targets
    assert "float64" not in targets["h100"].dtypes
    (h100,) = corpus.plan([case], "h100", targets["h100"], H200)
    assert (h100.dtype, h100.skip) == ("float64", None)
    npu = {"device_kind": "npu", "device_name": "Ascend910B", "device_count": 1, "torch": PIN}
    (ascend,) = corpus.plan([case], "ascend910b", targets["ascend910b"], npu)
    assert ascend.skip == "target ascend910b does not test float64 and its device does not compute in it"
    # a case parameterised over dtypes (its script reads REPRO_DTYPE) runs only in those the target tests
    repro = repo / "cases" / "mean64" / "repro.py"
    repro.write_text('import os\nDTYPE = os.environ.get("REPRO_DTYPE")\n' + repro.read_text())
    (case,) = corpus.discover(repo / "cases")
    (h100,) = corpus.plan([case], "h100", targets["h100"], H200)
    assert h100.skip == "target h100 does not test float64"


# h. a wrong-result script that draws random data with no seed is seeded, and says so, instead of refused

UNSEEDED = '''"""sum of a random tensor differs between eager and compiled"""
import torch
import numpy as np

x = torch.randn(8, 8)
noise = np.random.rand(8)
compiled = torch.compile(lambda t: t.sum())
assert torch.allclose(compiled(x), x.sum()), "compiled sum differs"
'''


def test_seeding_adds_a_seed_for_each_random_module_the_script_imports_after_its_imports():
    import ast

    from reprokit.contrib.oracle_checks import first_unseeded_draw
    from reprokit.contrib.seeding import seeded

    text, calls = seeded(UNSEEDED)
    assert calls == ["torch.manual_seed(0)", "np.random.seed(0)"]
    lines = text.splitlines()
    assert (
        lines[3:5]
        == [f"{call}  # added by reprokit new-case: the script drew random data with no seed" for call in calls]
        and lines[5] == ""
    )
    assert (
        first_unseeded_draw(ast.parse(text)) is None
        and text.replace("".join(f"{line}\n" for line in lines[3:5]), "") == UNSEEDED
    )
    assert seeded("import torch\ntorch.manual_seed(1)\nx = torch.randn(2)\n")[1] == []  # seeds already
    assert seeded("import torch\nx = torch.ones(2)\n")[1] == []  # draws nothing at random


def test_new_case_of_an_unseeded_wrong_result_script_seeds_it_and_says_so(repo, tmp_path):
    script = tmp_path / "random_sum.py"
    script.write_text(UNSEEDED)
    made = run_reprokit(repo, "new-case", "random-sum", "--from", str(script), "--wrong-result")
    assert made.returncode == 0, made.stdout + made.stderr
    assert "seeded: random_sum.py draws random data with no seed" in made.stdout, made.stdout
    repro = (repo / "cases" / "random-sum" / "repro.py").read_text()
    assert "torch.manual_seed(0)" in repro and "np.random.seed(0)" in repro
    assert script.read_text() == UNSEEDED  # the contributor's own file is left as it was
    assert run_reprokit(repo, "validate").returncode == 0


def test_a_case_name_that_matches_nothing_is_refused_before_torch_or_the_machine_is_asked(repo, tmp_path):
    """Without torch in the environment, a run that collected the machine's facts first would stop on that (exit 3):
    the missing name is said first, from the case folders alone."""
    from support import venv_without_torch

    new_case(repo)
    python = venv_without_torch(tmp_path / "venv")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "tools")}
    for suite in ("cases", "sweep"):
        done = subprocess.run(
            [
                str(python),
                "-m",
                "reprokit",
                "--root",
                str(repo),
                "run",
                "--host",
                "--target",
                "cpu",
                "--suite",
                suite,
                "--case",
                "no-such-case",
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.startswith("reprokit: --case 'no-such-case': no ") and "torch" not in done.stderr
        assert not (repo / "results").exists()


def test_a_run_on_a_terminal_shows_the_live_progress_bar(repo):
    """`reprokit run` on a terminal draws rich's bar (its ━ line) beside the per-run lines; piped, plain lines."""
    import pty
    import select

    new_case(repo)
    controller, terminal = pty.openpty()
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "tools"),
        "TERM": "xterm-256color",
        "COLUMNS": "120",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(repo),
            "run",
            "--host",
            "--target",
            "cpu",
            "--case",
            "first-run",
            "--no-report",
        ],
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
        env=env,
    )
    os.close(terminal)
    shown = b""
    while True:
        ready, _, _ = select.select([controller], [], [], 600)
        try:
            chunk = os.read(controller, 65536) if ready else b""
        except OSError:  # the terminal's other end closed: the run is over
            chunk = b""
        if not chunk:
            break
        shown += chunk
    assert proc.wait(timeout=60) == 0, shown.decode(errors="replace")
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode(errors="replace"))  # rich's colours and cursor moves
    assert "running" in text and "━" in text, text
    assert "[1/1] first-run/repro@float32: reproduces" in text, text


def test_max_envs_0_narrows_with_the_built_releases_before_asking_for_an_unbuilt_one():
    """Three of eight releases are built here (the others would each download an environment): with --max-envs 0
    they alone run, and they bound the change (2.9.1 reproduces, 2.13.0 does not): the answer names the releases
    between them as untested, where the search used to stop at the unbuilt newest release before any run."""
    versions = ["2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0", "2.13.0", "2.14.1", "2.15.0"]
    built = {"2.9.1", "2.13.0", "2.14.1"}
    fixed_in = versions.index("2.12.0")

    def run(version):
        assert version in built, f"torch {version} needs an environment: --max-envs 0 builds none"
        return Verdict.REPRODUCES if versions.index(version) < fixed_in else Verdict.DOES_NOT_REPRODUCE

    found = bisection.search(versions, {}, run, needs_build=lambda v: v not in built, max_envs=0)
    assert sorted(found.ran) == sorted(built) and found.built == []
    answer = found.answer()
    assert (answer.kind, answer.last, answer.first) == ("fixed", "2.9.1", "2.13.0"), answer
    assert answer.untested == ("2.10.0", "2.11.0", "2.12.0")
    assert "torch 2.11.0 would need one more" in found.stopped
