"""The contributor's loop without traps (issue 52): each step says what it did, what it did not, and the one command
that goes on; a run of one case changes only what that case changes."""
import argparse
from pathlib import Path

import pytest
import yaml
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


# b. a run of one case changes only that case's entries and the pages that show a change

NOTED = ("# kept by hand: this comment stays\n"
         "other-case/repro@float32:\n"
         "  verdict: reproduces\n"
         "  recorded_on: AMD EPYC 7763 64-Core Processor\n"
         "  machine_dependent: its input matrix is singular, so the condition number is rounding noise that differs by\n"
         "    CPU\n"
         "zz-last/repro@float32: fix-works\n")


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
    made = run_reprokit(repo, "new-case", "passing", "--from", str(Path(__file__).parent / "fixtures" / "scripts"
                                                                   / "passes.py"))
    assert made.returncode == 0, made.stdout + made.stderr
    assert ("oracle: {kind: nonzero-exit}, the default: the script exited 0 here, so this run suggests none; "
            "if the bug is in what it prints or computes, give --stdout/--stderr REGEX or --wrong-result") \
        in made.stdout, made.stdout
