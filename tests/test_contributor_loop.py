"""The contributor's loop without traps (issue 52): each step says what it did, what it did not, and the one command
that goes on; a run of one case changes only what that case changes."""
import argparse
from pathlib import Path

import pytest
from reprokit.cli import build_parser
from support import empty_repository, run_reprokit

pytestmark = pytest.mark.e2e
CONTRIB = Path(__file__).parent / "fixtures" / "contrib"
PIN = "2.14.1"  # cpu's pin in matrix.yaml: the torch of the environment the tests run in


@pytest.fixture
def repo(tmp_path):
    return empty_repository(tmp_path)


def new_case(repo: Path, case: str = "first-run") -> None:
    made = run_reprokit(repo, "new-case", case, "--from", str(CONTRIB / "printed_dtype.py"),
                        "--stdout", r"result dtype: torch\.int64")
    assert made.returncode == 0, made.stderr


# a. --update-expected says when it accepts nothing, and the hint repeats --torch

def test_update_expected_on_another_torch_than_the_pin_fails_in_one_line_naming_what_to_install(repo):
    matrix = repo / "matrix.yaml"
    matrix.write_text(matrix.read_text().replace(f'pins: {{torch: "{PIN}"', 'pins: {torch: "2.13.0"', 1))
    new_case(repo)
    ran = run_reprokit(repo, "run", "--host", "--target", "cpu", "--case", "first-run", "--update-expected")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    said = [line for line in ran.stdout.splitlines() if line.startswith("--update-expected:")]
    assert said == [f"--update-expected: nothing accepted into expected/cpu.yaml: torch {PIN} ran, not cpu's pin "
                    "2.13.0; run with --torch 2.13.0 (or pip install torch==2.13.0 here)"], ran.stdout
    assert not (repo / "expected" / "cpu.yaml").exists()


def test_the_pin_hint_after_a_torch_run_keeps_torch(repo):
    new_case(repo)
    ran = run_reprokit(repo, "run", "--host", "--target", "cpu", "--torch", PIN, "--case", "first-run")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (f"pin it as the expected state (then commit expected/cpu.yaml with the case): reprokit run --target cpu "
            f"--torch {PIN} --case first-run --update-expected") in ran.stdout, ran.stdout


# f. every sub-command's --help describes it; every --target says what it is

def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_help_describes_the_command_and_every_target_option_has_help():
    undescribed = [name for name, parser in _commands().items() if name != "run-request" and not parser.description]
    assert undescribed == []
    bare = [name for name, parser in _commands().items() for action in parser._actions
            if "--target" in action.option_strings and not action.help]
    assert bare == []


def test_validate_help_says_what_it_checks_and_how_it_exits():
    shown = run_reprokit(Path.cwd(), "validate", "--help")
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    assert "case.yaml" in text and "claims.yaml" in text and "exits 1 when there is any" in text, text
