"""A contributor's path: a script from an issue -> a case -> a verdict, in three commands; validate; upstream."""

import shutil
from pathlib import Path

import pytest
from support import FLOAT64_GROUP, empty_repository, run_reprokit, stored

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
CONTRIB = Path(__file__).parent / "fixtures" / "contrib"


reprokit = run_reprokit


@pytest.fixture
def empty_repo(tmp_path):
    return empty_repository(tmp_path)


@pytest.mark.parametrize(
    "script, oracle, verdict",
    [
        (
            "data_dependent_branch.py",
            ["--raises", "torch._dynamo.exc.Unsupported", "--match", "(?i)data.dependent"],
            "reproduces",
        ),
        pytest.param(
            "data_dependent_branch.py",
            ["--raises", "RuntimeError", "--match", "never says this"],
            "fails-differently",
            marks=pytest.mark.heavy,
        ),
        ("printed_dtype.py", ["--stdout", r"result dtype: torch\.int64"], "reproduces"),
        ("printed_dtype.py", ["--stdout", r"result dtype: torch\.float16"], "does-not-reproduce"),
        ("recompiles.py", ["--stderr", "Recompiling function"], "reproduces"),
        ("hangs.py", ["--hang", "--timeout", "3"], "reproduces"),
        ("data_dependent_branch.py", [], "reproduces"),  # no oracle: a non-zero exit is the bug
    ],
)
def test_script_from_an_issue_becomes_a_case_with_a_verdict(empty_repo, script, oracle, verdict):
    made = reprokit(
        empty_repo,
        "new-case",
        "from-issue",
        "--from",
        str(CONTRIB / script),
        *oracle,
        "--link",
        "https://github.com/pytorch/pytorch/issues/1",
        "--reported-on",
        "2.13",
        "--issue-state",
        "open",
    )
    assert made.returncode == 0, made.stderr
    assert (empty_repo / "cases" / "from-issue" / "repro.py").read_bytes() == (CONTRIB / script).read_bytes()
    assert not (empty_repo / "cases" / "from-issue" / "fixed.py").exists()
    ran = reprokit(empty_repo, "run", "--host", "--target", "cpu", "--case", "from-issue")
    (record,) = [r for r in stored(empty_repo) if r.variant == "repro"]
    assert record.verdict == verdict, record
    assert "no fix yet" in (empty_repo / "reports" / "cpu.md").read_text()
    # new-case's one run is judged by run's oracle code, in run's words: the two never disagree.
    assert f": {verdict} (" in made.stdout and f"from-issue/repro@float32: {verdict} (" in ran.stdout, made.stdout
    assert "new: no expected state yet: from-issue/repro@float32" in ran.stdout


@pytest.mark.xdist_group(FLOAT64_GROUP)
def test_a_script_that_fixes_its_own_dtype_runs_as_written_and_gets_a_title_from_its_run(float64_case):
    """A float64 script (no REPRO_DTYPE) declares float64 and runs, once, as written: its record and the report say
    float64, the dtype it computes in. An upstream link needs no version or state the issue does not give; the title
    says what the script does, never a verdict."""
    root, made, _ = float64_case  # new-case --from float64_mean.py --link ..., then run (conftest.py: shared)
    assert made.returncode == 0, made.stderr
    import yaml

    case = yaml.safe_load((root / "cases" / "float-sixty-four" / "case.yaml").read_text())
    assert case["requires"]["dtypes"] == ["float64"]
    assert case["reported_on"] == "unknown" and case["issue_state"] == "unknown"
    assert case["title"] == "float64_mean: runs to the end here"
    assert "next: reprokit run --target cpu" in made.stdout
    (record,) = stored(root)
    assert record.verdict == "does-not-reproduce" and record.dtype == "float64", record
    assert "float64" in (root / "reports" / "cpu.md").read_text()


@pytest.mark.heavy
def test_a_nonzero_exit_oracle_and_a_title_from_torchs_exception(empty_repo):
    import yaml

    branch = reprokit(
        empty_repo, "new-case", "data-branch", "--from", str(CONTRIB / "data_dependent_branch.py"), "--nonzero-exit"
    )
    case = yaml.safe_load((empty_repo / "cases" / "data-branch" / "case.yaml").read_text())
    assert case["expect"]["repro"] == {"kind": "nonzero-exit"} and ": reproduces (" in branch.stdout
    assert case["title"].startswith("Unsupported in dynamo: ") and case["category"] == "dynamic-shape", case


def test_scaffold_is_valid_and_runs(empty_repo):
    assert reprokit(empty_repo, "new-case", "my-new-case", "--category", "fusion").returncode == 0
    assert {p.name for p in (empty_repo / "cases" / "my-new-case").iterdir()} == {"case.yaml", "repro.py", "fixed.py"}
    assert "# A repro case. Fields" in (empty_repo / "cases" / "my-new-case" / "case.yaml").read_text()
    assert reprokit(empty_repo, "validate").returncode == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["Bad ID"], "lowercase letters, digits and '-' only"),
        (["ok-id", "--raises", "X", "--hang"], "--raises and --hang: give one oracle"),
        (["ok-id", "--from", "/no/such.py"], "--from /no/such.py: no such file"),
    ],
)
def test_new_case_refuses_bad_input_in_one_line(empty_repo, args, message):
    proc = reprokit(empty_repo, "new-case", *args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
    assert not any((empty_repo / "cases").iterdir())


def test_validate_names_a_script_that_imports_the_project(empty_repo):
    # new-case writes no case validate refuses: it says why with validate's line, naming the script given
    made = reprokit(
        empty_repo, "new-case", "imports-project", "--from", str(CONTRIB / "imports_project.py"), "--no-run"
    )
    assert made.returncode == 2 and not any((empty_repo / "cases").iterdir())
    assert (
        f"{CONTRIB / 'imports_project.py'}:1: imports reprokit; case scripts must run with torch alone" in made.stderr
    )
    folder = empty_repo / "cases" / "imports-project"  # the same case written by hand
    reprokit(empty_repo, "new-case", "imports-project", "--no-run")
    shutil.copyfile(CONTRIB / "imports_project.py", folder / "repro.py")
    proc = reprokit(empty_repo, "validate")
    assert proc.returncode == 1
    assert "cases/imports-project/repro.py:1: imports reprokit; case scripts must run with torch alone" in proc.stdout


def test_validate_resolves_dotted_exception_names(empty_repo):
    reprokit(
        empty_repo,
        "new-case",
        "bad-exception",
        "--from",
        str(CONTRIB / "printed_dtype.py"),
        "--raises",
        "torch._dynamo.exc.NoSuchError",
    )
    proc = reprokit(empty_repo, "validate")
    assert "expect.repro.exception: 'torch._dynamo.exc.NoSuchError' does not resolve to a class" in proc.stdout


def test_validate_checks_names_with_the_pinned_torch_or_says_what_it_did_not_check(empty_repo, tmp_path):
    """Without torch here, validate neither skips the names nor says the cases are valid: it checks them with the
    cpu target's pinned torch where that is built in the environment cache, else names what it did not check."""
    import os
    import subprocess
    import sys
    from importlib import metadata

    from reprokit.model.matrix import load_matrix
    from support import venv_without_torch

    pin = load_matrix(empty_repo / "matrix.yaml").targets["cpu"].pins.torch
    assert metadata.version("torch").split("+")[0] == pin  # the tests' torch is the pin: its cache entry below is too
    reprokit(
        empty_repo,
        "new-case",
        "bad-exception",
        "--from",
        str(CONTRIB / "printed_dtype.py"),
        "--raises",
        "torch._dynamo.exc.NoSuchErrorClass",
        "--no-run",
    )
    python = venv_without_torch(tmp_path / "venv")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools"), "REPROKIT_CACHE": str(tmp_path / "cache")}

    def validate():
        return subprocess.run(
            [str(python), "-m", "reprokit", "--root", str(empty_repo), "validate"],
            env=env,
            capture_output=True,
            text=True,
        )

    unchecked = validate()
    assert unchecked.returncode == 1, unchecked.stdout + unchecked.stderr
    assert (
        f"exception names: 1 not checked (torch._dynamo.exc.NoSuchErrorClass): the cpu target's pinned torch "
        f"{pin} is not installed here"
    ) in unchecked.stdout
    assert "are valid" not in unchecked.stdout and "Traceback" not in unchecked.stderr

    pinned = tmp_path / "cache" / "envs" / f"torch-{pin}"  # the pin's environment, as `run --torch PIN` leaves it
    (pinned / "bin").mkdir(parents=True)
    (pinned / "bin" / "python").symlink_to(sys.executable)
    shutil.copy(Path(sys.prefix) / "pyvenv.cfg", pinned / "pyvenv.cfg")
    (pinned / "lib").symlink_to(Path(sys.prefix) / "lib")
    (pinned / ".complete").write_text(f"torch {pin}\n")
    env["VIRTUAL_ENV"] = sys.prefix  # it links into the tests' environment: the contained run is shown that folder too
    checked = validate()
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "'torch._dynamo.exc.NoSuchErrorClass' does not resolve to a class" in checked.stdout
    assert "not checked" not in checked.stdout


def test_the_committed_corpus_validates():
    proc = reprokit(ROOT, "validate")
    assert proc.returncode == 0, proc.stdout


@pytest.mark.heavy
def test_minify_keeps_pytorchs_minified_repro_beside_the_case(tmp_path):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    shutil.copytree(ROOT / "cases" / "backend-fallback-chain", tmp_path / "cases" / "backend-fallback-chain")
    proc = reprokit(tmp_path, "minify", "backend-fallback-chain")
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "cases" / "backend-fallback-chain"
    assert "class Repro(torch.nn.Module)" in (folder / "minified_repro.py").read_text()
    assert "TORCHDYNAMO_REPRO_AFTER=dynamo" in (folder / "MINIFIED.md").read_text()
    assert (folder / "repro.py").read_bytes() == (ROOT / "cases" / "backend-fallback-chain" / "repro.py").read_bytes()


@pytest.mark.heavy
def test_minify_says_when_the_failure_is_not_in_a_backend(tmp_path):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    shutil.copytree(ROOT / "cases" / "custom-op-unregistered-gemm", tmp_path / "cases" / "custom-op-unregistered-gemm")
    proc = reprokit(tmp_path, "minify", "custom-op-unregistered-gemm")
    assert proc.returncode == 2 and "the minifier did not trigger after dynamo" in proc.stderr
