"""The contributor's loop at its edges: a run that never reached the script's own code proposes no oracle, an
undecided bisect stops early and says why, a new case's first run passes, the environment cache counts and frees
what `du` and `df` see, and new-case writes what the script does (its dtype, its failing stage and API)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support import FLOAT64_GROUP, empty_repository, interpreters, run_reprokit, stored, uv_layout, venv_without_torch

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]
CONTRIB = Path(__file__).parent / "fixtures" / "contrib"


reprokit = run_reprokit


@pytest.fixture
def empty_repo(tmp_path):
    return empty_repository(tmp_path)


# 2. a bounded undecided bisect


def test_a_wrong_oracle_over_eight_releases_stops_after_two_runs_and_says_why(empty_repo, tmp_path):
    """Every release fails differently from the oracle (it names an exception the script never raises): the two
    newest are undecided for the same reason, so the search stops there instead of running all eight."""
    releases = interpreters(tmp_path / "releases", 8)
    done = reprokit(
        empty_repo,
        "bisect",
        "--target",
        "cpu",
        "--from",
        str(CONTRIB / "data_dependent_branch.py"),
        "--raises",
        "RuntimeError",
        "--match",
        "never says this",
        "--versions",
        *releases,
        env={"REPROKIT_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 1, done.stdout + done.stderr  # undecided is no answer: a non-zero exit
    assert "runs made: 2 " in done.stdout and f"({releases[-1]}, {releases[-2]})" in done.stdout, done.stdout
    assert "both undecided for the same reason (fails-differently" in done.stdout
    assert "give the oracle that names the bug" in done.stdout
    assert not (tmp_path / "cache" / "envs").exists()


def test_the_environments_to_build_are_estimated_first_and_max_envs_bounds_them(empty_repo, tmp_path):
    """Seven of the eight history releases have no environment here: the estimate is printed before any is built,
    and --max-envs 0 stops the search before the first (nothing downloaded)."""
    done = reprokit(
        empty_repo,
        "bisect",
        "--target",
        "cpu",
        "--from",
        str(CONTRIB / "data_dependent_branch.py"),
        "--raises",
        "torch._dynamo.exc.Unsupported",
        "--max-envs",
        "0",
        env={"REPROKIT_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    estimate = next(i for i, line in enumerate(lines) if "have no environment here" in line)
    assert "GiB downloaded" in lines[estimate] and "at most 4 of them" in lines[estimate], lines[estimate]
    assert "bisect: 8 releases, 0 answered by the store: at most 4 runs when every run decides" in done.stdout
    assert "--max-envs 0: 0 environments built (none), torch 2.15.0 would need one more" in done.stdout
    assert "environments built: 0" in done.stdout
    assert not (tmp_path / "cache" / "envs").exists()


# 3. a new case's first run passes


def test_a_new_cases_first_run_passes_and_says_how_to_pin_it(empty_repo):
    made = reprokit(
        empty_repo,
        "new-case",
        "first-run",
        "--from",
        str(CONTRIB / "printed_dtype.py"),
        "--stdout",
        r"result dtype: torch\.int64",
    )
    assert made.returncode == 0, made.stderr
    ran = reprokit(empty_repo, "run", "--host", "--target", "cpu", "--case", "first-run")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "new: no expected state yet: first-run/repro@float32: reproduces" in ran.stdout
    assert "the run fails" not in ran.stdout
    assert (
        "pin it as the expected state (then commit expected/cpu.yaml with the case): reprokit run --target cpu "
        "--case first-run --update-expected"
    ) in ran.stdout
    assert "1 new (no expected state yet: the run passes" in ran.stdout
    pinned = reprokit(empty_repo, "run", "--host", "--target", "cpu", "--case", "first-run", "--update-expected")
    assert pinned.returncode == 0
    assert yaml.safe_load((empty_repo / "expected" / "cpu.yaml").read_text()) == {
        "first-run/repro@float32": "reproduces"
    }


# 4. the environment cache as du and df see it


def _du(path: Path) -> int:
    return int(
        subprocess.run(["du", "-s", "-B1", str(path)], capture_output=True, text=True, check=True).stdout.split()[0]
    )


def test_cache_sizes_count_each_inode_once_and_remove_frees_what_it_says(tmp_path):
    """uv's layout in small: each environment's files are hard links into uv's archives. Two environments share one
    archive (a library both use); 2.10.0 alone uses another. `envs` reports what `du` does, and `--remove 2.10.0`
    frees its own archive (df sees it) while the shared one stays for 2.11.0."""
    cache = tmp_path / "cache"
    own, shared = uv_layout(cache)
    env = {"REPROKIT_CACHE": str(cache)}
    listed = reprokit(tmp_path, "envs", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split()[1:3] for line in listed.stdout.splitlines() if line.strip()}
    assert rows["total"] == ["64.0", "MiB"] and abs(_du(cache) - (64 << 20)) < (1 << 20), (listed.stdout, _du(cache))
    assert rows["2.10.0"] == ["64.0", "MiB"] and rows["2.11.0"] == ["16.0", "MiB"]

    removed = reprokit(tmp_path, "envs", "--remove", "2.10.0", env=env)
    assert removed.returncode == 0, removed.stderr
    assert "freed 48.0 MiB (files whose last link went)" in removed.stdout, removed.stdout
    assert "1 archives of uv's cache no environment links any more" in removed.stdout
    assert "df: " in removed.stdout
    assert not own.exists() and (shared / "lib.so").stat().st_nlink == 2
    assert abs(_du(cache) - (16 << 20)) < (1 << 20)


def a_wheel(folder: Path, name: str) -> None:
    """A pure-Python wheel of ours, built by hand (a zip with its dist-info): uv installs it from a folder offline."""
    import base64
    import hashlib
    import zipfile

    files = {
        f"{name}/__init__.py": b"VALUE = 1\n" + os.urandom(4096).hex().encode() + b"\n",
        f"{name}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{name}-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    digest = {
        path: base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        for path, data in files.items()
    }
    record = "".join(f"{path},sha256={digest[path]},{len(data)}\n" for path, data in files.items())
    with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
        wheel.writestr(f"{name}-1.0.dist-info/RECORD", record + f"{name}-1.0.dist-info/RECORD,,\n")


def test_removing_an_environment_leaves_uvs_cache_able_to_install_what_it_held(tmp_path, monkeypatch):
    """Real uv, real hard links: 9.0.0 alone uses one wheel, both environments another. After `remove 9.0.0` frees
    the first wheel's archive, uv installs that wheel again (its index no longer names the deleted archive)."""
    from reprokit.run import env_cache

    monkeypatch.setenv("REPROKIT_CACHE", str(tmp_path / "cache"))
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for name in ("reprokit_test_own", "reprokit_test_shared"):
        a_wheel(wheels, name)
    uv = env_cache.uv_binary()
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "cache" / "uv"), "UV_PYTHON_DOWNLOADS": "never"}

    def build(version: str, *names: str) -> subprocess.CompletedProcess:
        folder = tmp_path / "cache" / "envs" / f"torch-{version}"
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(folder)], env=env, check=True)
        return subprocess.run(
            [
                uv,
                "pip",
                "install",
                "-q",
                "--python",
                str(folder / "bin" / "python"),
                "--no-index",
                "--find-links",
                str(wheels),
                *names,
            ],
            env=env,
            capture_output=True,
            text=True,
        )

    assert build("9.0.0", "reprokit_test_own", "reprokit_test_shared").returncode == 0
    assert build("9.1.0", "reprokit_test_shared").returncode == 0
    freed = env_cache.remove(["9.0.0"])
    assert freed.archives == 1 and freed.counted > 4096
    again = build("9.2.0", "reprokit_test_own", "reprokit_test_shared")
    assert again.returncode == 0, again.stderr
    site = next((tmp_path / "cache" / "envs" / "torch-9.1.0" / "lib").glob("python3*/site-packages"))
    assert (site / "reprokit_test_shared" / "__init__.py").read_text().startswith("VALUE = 1")  # untouched


# 1. no oracle from a run that never reached the script's own code


@pytest.mark.parametrize("command", [["new-case", "no-torch-here"], ["bisect", "--target", "cpu"]])
def test_a_run_without_torch_proposes_no_oracle_and_stops(empty_repo, tmp_path, command):
    python = venv_without_torch(tmp_path / "venv")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools"), "REPROKIT_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [
            str(python),
            "-m",
            "reprokit",
            "--root",
            str(empty_repo),
            *command,
            "--from",
            str(CONTRIB / "data_dependent_branch.py"),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3, done.stdout + done.stderr  # this environment lacks torch: exit 3, not bad input
    assert "torch is not installed in this environment" in done.stderr and "No module named 'torch'" in done.stderr
    assert "Traceback" not in done.stderr and "oracle from that run" not in done.stdout
    assert not any((empty_repo / "cases").iterdir()) and not (tmp_path / "cache" / "envs").exists()


def test_a_script_that_fails_at_its_own_imports_proposes_no_oracle(empty_repo, tmp_path):
    script = tmp_path / "needs_a_package.py"
    script.write_text(
        '"""Needs a package this environment lacks."""\nimport torch\nimport no_such_package_here\n\n'
        "torch.compile(lambda x: x + 1)(torch.ones(2))\n"
    )
    done = reprokit(empty_repo, "new-case", "missing-import", "--from", str(script))
    assert done.returncode == 3, done.stdout + done.stderr
    assert (
        "the script failed at its import on line 3, before its first own line: ModuleNotFoundError: No module "
        "named 'no_such_package_here'"
    ) in done.stderr
    assert not any((empty_repo / "cases").iterdir())


# 5. what new-case writes is what the script does; bisect's hints and exit status


@pytest.mark.xdist_group(FLOAT64_GROUP)
def test_a_float64_script_is_recorded_and_reported_in_float64(float64_case):
    root, made, ran = float64_case  # new-case --from float64_mean.py, then run (conftest.py: one of each, shared)
    assert made.returncode == 0, made.stderr
    case = yaml.safe_load((root / "cases" / "float-sixty-four" / "case.yaml").read_text())
    assert case["requires"]["dtypes"] == ["float64"]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (record,) = stored(root)
    assert record.dtype == "float64" and record.verdict == "does-not-reproduce", record
    report = (root / "reports" / "cpu.md").read_text()
    assert "float64" in report and "float32" not in report


def test_title_and_category_come_from_the_failing_stage_and_the_api_in_the_failing_frame(empty_repo, tmp_path):
    """Random sizes in torch's message stay out of the title; the torch call on the failing line is in it."""
    script = tmp_path / "cat_sizes.py"
    script.write_text(
        "import torch\n\n\ndef f(a, b):\n    return torch.cat([a, b], dim=1).relu()\n\n\n"
        "a, b = torch.randn(37, 3), torch.randn(12, 4)\n"
        'print(torch.compile(f, backend="aot_eager")(a, b))\n'
    )
    made = reprokit(empty_repo, "new-case", "cat-sizes", "--from", str(script))
    assert made.returncode == 0, made.stderr
    case = yaml.safe_load((empty_repo / "cases" / "cat-sizes" / "case.yaml").read_text())
    assert case["title"].startswith("TorchRuntimeError in dynamo at torch.cat: "), case["title"]
    assert not any(ch.isdigit() for ch in case["title"]) and case["category"] == "type-inference", case

    branch = reprokit(empty_repo, "new-case", "branch", "--from", str(CONTRIB / "data_dependent_branch.py"))
    case = yaml.safe_load((empty_repo / "cases" / "branch" / "case.yaml").read_text())
    assert case["category"] == "dynamic-shape" and case["title"] == "Unsupported in dynamo: Data-dependent branching"
    assert "oracle from that run" in branch.stdout

    printed = reprokit(
        empty_repo,
        "new-case",
        "printed",
        "--from",
        str(CONTRIB / "printed_dtype.py"),
        "--stdout",
        r"result dtype: torch\.int64",
    )
    case = yaml.safe_load((empty_repo / "cases" / "printed" / "case.yaml").read_text())
    assert printed.returncode == 0 and "\\" not in case["title"] and "result dtype: torch.int64" in case["title"]


def test_an_oracle_that_differs_only_by_escapes_gets_no_note(empty_repo):
    made = reprokit(
        empty_repo,
        "new-case",
        "escaped",
        "--from",
        str(CONTRIB / "data_dependent_branch.py"),
        "--raises",
        "torch._dynamo.exc.Unsupported",
        "--match",
        "Data-dependent branching",
    )
    assert made.returncode == 0 and ": reproduces (" in made.stdout, made.stdout + made.stderr
    assert "differs from what this run suggests" not in made.stdout


def test_new_case_proposes_no_case_that_validate_refuses(empty_repo, tmp_path):
    """An assertion over unseeded random data is proposed as wrong-result, which validate refuses unseeded: new-case
    seeds a script that imports torch by name (and says so), and refuses, writing nothing, one it cannot seed."""
    body = (
        "def f(x):\n    return torch.nn.functional.gelu(x) * 2\n\n\nx = torch.randn(8, 8)\n"
        'assert torch.equal(torch.compile(f, backend="eager")(x), f(x) + 1), "compiled differs from eager"\n'
    )
    script = tmp_path / "unseeded.py"
    script.write_text("import torch\n\n" + body)
    made = reprokit(empty_repo, "new-case", "seeded", "--from", str(script))
    assert made.returncode == 0 and "{kind: wrong-result}" in made.stdout, made.stdout + made.stderr
    assert "seeded: unseeded.py draws random data with no seed" in made.stdout
    ran = [line for line in made.stdout.splitlines() if line.startswith("ran unseeded.py once")]
    assert len(ran) == 1, made.stdout  # seeded before its one run: what ran is what the case holds
    assert made.stdout.index("seeded: ") < made.stdout.index("ran unseeded.py once")
    assert "torch.manual_seed(0)" in (empty_repo / "cases" / "seeded" / "repro.py").read_text()
    checked = reprokit(empty_repo, "validate")
    assert checked.returncode == 0, checked.stdout
    unseedable = tmp_path / "unseedable.py"  # torch's names imported one by one: no module to seed by name
    unseedable.write_text(
        "from torch import compile, equal, randn\n\nx = randn(8, 8)\n"
        'assert equal(compile(lambda t: t * 2, backend="eager")(x), x * 3), "differs"\n'
    )
    refused = reprokit(empty_repo, "new-case", "unseedable", "--from", str(unseedable))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"{unseedable}:3: a wrong-result repro draws random data with no seed" in refused.stderr
    assert not (empty_repo / "cases" / "unseedable").exists()


def test_the_timeout_hint_is_longer_than_the_limit_that_killed_the_run():
    """A timed-out run is confirmed with a longer limit before it is recorded (15 s for --timeout 5): the retry names
    that limit, and with no run that finished it says what the script needs is unknown rather than guess a double."""
    from reprokit.contrib.bisection import Bisection
    from reprokit.contrib.bisection_answer import Seen
    from reprokit.model.verdict import Verdict

    found = Bisection(
        ["2.12.1", "2.13.0"],
        {"2.12.1": Seen(Verdict.TIMEOUT, "killed after 15 s"), "2.13.0": Seen(Verdict.TIMEOUT, "killed after 15 s")},
        timeout=5,
    )
    line = found.answer().line()
    assert "what the script needs is unknown" in line and "it was killed after 15 s" in line, line
    assert "--timeout 10" not in line and "--timeout 30" not in line, line


def test_the_environment_variables_are_documented():
    documented = (ROOT / "README.md").read_text() + (ROOT / "CONTRIBUTING.md").read_text()
    for name in (
        "REPROKIT_CACHE",
        "REPROKIT_SITE_URL",
        "REPROKIT_CONTAINER_MEMORY",
        "REPROKIT_MEMORY_BUDGET",
        "REPROKIT_DISK_BUDGET",
        "REPROKIT_PIDS_BUDGET",
        "REPROKIT_WHEELHOUSE",
        "REPRO_DEVICE",
        "REPRO_DTYPE",
    ):
        assert f"`{name}`" in documented, name
    assert "## Environment variables" in (ROOT / "CONTRIBUTING.md").read_text()


def test_the_from_help_and_contributing_say_what_new_case_does_to_an_unseeded_script():
    from reprokit.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command" or getattr(a, "choices", None))
    source = next(a for a in sub.choices["new-case"]._actions if a.dest == "source")
    assert "seed" in source.help and "unchanged" not in source.help
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    assert "seeded before its one run" in contributing and "no seed is\n  refused" not in contributing


def test_a_graph_breaks_category_is_its_reasons_never_the_links_words():
    """Graph breaks as torch 2.14.1 said them (committed records): the category comes from the reason (an operator
    with no fake-tensor support is a custom op's), else it is the corpus's category of graph breaks (diagnosis); the
    graph-break site's host (meta-pytorch.github.io) no longer reads as a `meta` tensor (type-inference)."""
    import json

    from reprokit.contrib.observed_failure import category

    said = {}
    for line in (ROOT / "results" / "cpu" / "cases" / "2.14.1+cu130.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["variant"] == "repro" and rec["case"] in ("custom-op-unregistered-gemm", "ddp-compiled-backward-lambda"):
            said[rec["case"]] = rec["message"]
    plain = "import torch\n\n\ndef f(x):\n    return x + 1\n"  # a script that calls no API with a category
    assert (
        "graph break" in said["custom-op-unregistered-gemm"] and "meta-pytorch" in said["custom-op-unregistered-gemm"]
    )
    assert category("dynamo", None, plain, said["custom-op-unregistered-gemm"]) == "custom-op"
    assert category("dynamo", None, plain, said["ddp-compiled-backward-lambda"]) == "diagnosis"
    assert category("dynamo", None, plain, "Graph break: Data-dependent branching") == "dynamic-shape"
    assert (
        category("aot_autograd", None, plain, "metadata mismatch, see https://meta-pytorch.github.io/x")
        == "type-inference"
    )  # aot_autograd's stage: no words of a link decide it
