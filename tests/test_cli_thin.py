"""The command line stays thin (issue 52's cli items): `--help` builds every parser without importing what the
commands run with (pydantic, jinja2, the publishers, the tracker), lists only the public commands, and a refusal is one
line whose exit status says whether the input (2) or this machine (3) must change."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import ROOT, empty_repository, run_reprokit

pytestmark = pytest.mark.e2e

HEAVY = (
    "pydantic",
    "jinja2",
    "yaml",
    "matplotlib",
    "docker",
    "torch",
    "reprokit.publish",
    "reprokit.tracker",
    "reprokit.run",
    "reprokit.store",
    "reprokit.contrib",
    "reprokit.images",
)


def imported_by(*args: str) -> list[str]:
    """The modules `python -X importtime -m reprokit ARGS` imports, by name (what a --help costs, counted rather than
    timed: a timed test fails on a busy machine)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "reprokit", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")][1:]


@pytest.mark.parametrize("args", [["--help"], ["triage", "--help"], ["new-case", "--help"], ["run", "--help"]])
def test_help_imports_the_command_line_only(args):
    modules = imported_by(*args)
    heavy = [m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
    assert heavy == []
    ours = [m for m in modules if m.startswith("reprokit")]
    assert all(
        m.startswith("reprokit.cli") or m in ("reprokit", "reprokit.model", "reprokit.model.choices") for m in ours
    ), ours
    assert len(ours) <= 15, ours  # the cli's modules and the choices: it was 138 (about 4 s on a laptop)


def test_help_lists_public_commands_only_and_says_the_exit_statuses(tmp_path):
    shown = run_reprokit(tmp_path, "--help")
    assert shown.returncode == 0, shown.stderr
    assert "==SUPPRESS==" not in shown.stdout and "run-request" not in shown.stdout
    assert "{run,where,history," in shown.stdout
    text = " ".join(shown.stdout.split())
    assert "2 bad input" in text and "3 this machine" in text
    internal = run_reprokit(tmp_path, "run-request", "--help")  # still there: the container's runner calls it
    assert internal.returncode == 0 and "request" in internal.stdout


def test_a_missing_tool_is_an_environment_error_one_line_exit_3(tmp_path):
    repo = empty_repository(tmp_path)
    done = run_reprokit(repo, "triage", "1", env={"PATH": str(tmp_path)})  # no gh on this PATH
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stderr.startswith("reprokit: gh is not installed") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_no_docker_engine_is_an_environment_error(tmp_path):
    repo = empty_repository(tmp_path)
    done = run_reprokit(
        repo, "where", "--container", "--target", "cpu", env={"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    )
    assert done.returncode == 3 and done.stderr.count("\n") == 1, done.stdout + done.stderr
    assert "no Docker engine answers" in done.stderr


def test_bad_input_stays_exit_2(tmp_path):
    done = run_reprokit(empty_repository(tmp_path), "triage")
    assert done.returncode == 2 and done.stderr == "reprokit: triage: give the issue number, or --issue-json FILE\n"


def test_no_command_function_builds_what_it_runs_with_at_import():
    """Each cli module imports the package's layers inside its cmd_* functions (what keeps --help fast)."""
    for module in (ROOT / "tools" / "reprokit" / "cli").glob("*.py"):
        top = [line for line in module.read_text().splitlines() if line.startswith(("import ", "from "))]
        lower = [
            line
            for line in top
            if line.startswith("from reprokit.")
            and not line.startswith(
                ("from reprokit.cli", "from reprokit.model.choices", "from reprokit import __version")
            )
        ]
        assert lower == [], f"{module.name}: {lower}"
