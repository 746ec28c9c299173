# /// script
# dependencies = ["nox>=2025.2.9", "PyYAML>=6"]
# ///
"""Thin sessions over the `reprokit` CLI: each installs what it needs, then calls one sub-command.

`nox -l` lists them; `nox -s repro-cpu` runs the corpus on this machine's CPU; `nox -s tests` runs the tests.
Arguments after `--` go to the sub-command unchanged, e.g. `nox -s repro-cpu -- --case 'dynamic-shape-*'`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import nox
import yaml

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "venv"
nox.options.sessions = ["repro-cpu", "tests"]

ROOT = Path(__file__).parent
TARGETS = yaml.safe_load((ROOT / "matrix.yaml").read_text())["targets"]


def install_torch(session: nox.Session, target: str) -> None:
    """The target's torch pin: PyPI for the CPU target, the target's own index alone for accelerators (no other
    index can supply another build of torch)."""
    pins = TARGETS[target]["pins"]
    args = [f"torch=={pins['torch']}"]
    if TARGETS[target]["family"] != "cpu" and pins.get("index_url"):
        args += ["--index-url", pins["index_url"]]
    if os.environ.get("REPROKIT_WHEELHOUSE"):  # air-gapped machines: everything from local wheels
        args += ["--no-index", "--find-links", os.environ["REPROKIT_WHEELHOUSE"]]
    session.install(*args)


def reprokit(session: nox.Session, *args: str, target: str | None = None, extras: str = "") -> None:
    """The one shared helper: install reprokit (and torch for `target` when its cases run here), then call it.

    Where the cases run (this environment or the target's container) is decided by reprokit alone (`reprokit where`).
    """
    session.install("-e", f".{extras}")
    if target is not None:
        where = session.run("reprokit", "where", "--target", target, *session.posargs, silent=True, external=True)
        if where.strip().splitlines()[-1] == "host":
            install_torch(session, target)
    session.run("reprokit", *args, *session.posargs)


for _name in TARGETS:

    @nox.session(name=f"repro-{_name}", reuse_venv=True, default=False)
    def _repro(session: nox.Session, _target: str = _name) -> None:
        reprokit(session, "run", "--target", _target, target=_target)

    _repro.__doc__ = f"Run every case on {TARGETS[_name]['description']} and render reports/{_name}.md."

    @nox.session(name=f"sweep-{_name}", reuse_venv=True, default=False)
    def _sweep(session: nox.Session, _target: str = _name) -> None:
        reprokit(session, "run", "--target", _target, "--suite", "sweep", target=_target, extras="[sweep]")

    _sweep.__doc__ = f"Run the 27-structure compile sweep on {TARGETS[_name]['description']}."

    @nox.session(name=f"history-{_name}", reuse_venv=True, default=False)
    def _history(session: nox.Session, _target: str = _name) -> None:
        session.install("-e", ".", "uv")
        for version in TARGETS[_target]["pins"].get("history", []):  # each in its own environment (uv, one cache)
            session.run(
                "reprokit",
                "run",
                "--host",
                "--target",
                _target,
                "--torch",
                version,
                "--skip-recorded",
                "--no-report",
                *session.posargs,
                success_codes=[0, 1],
            )
        session.run("reprokit", "report")

    _history.__doc__ = f"Run the corpus on every torch release of {_name}'s history (recorded runs are skipped)."

    @nox.session(name=f"image-{_name}", reuse_venv=True, default=False)
    def _image(session: nox.Session, _target: str = _name) -> None:
        session.install("-e", ".")
        session.run("reprokit", "image", "--target", _target, *session.posargs)

    _image.__doc__ = f"Build (or reuse) the {_name} image with the docker SDK."


@nox.session(reuse_venv=True)
def images(session: nox.Session) -> None:
    """Render every target's Dockerfile into images/rendered/."""
    reprokit(session, "images")


@nox.session(reuse_venv=True)
def report(session: nox.Session) -> None:
    """Render reports/*.md from the committed results (no torch needed)."""
    reprokit(session, "report")


@nox.session(reuse_venv=True, default=False)
def site(session: nox.Session) -> None:
    """Render the compatibility site (static HTML) from the committed results into site/ (-- --out DIR elsewhere)."""
    session.install("-e", ".")
    session.run("reprokit", "site", *(session.posargs or ["--out", "site"]))


@nox.session(reuse_venv=True)
def validate(session: nox.Session) -> None:
    """Check every case, matrix.yaml, claims.yaml and the sweep; runs nothing. Installs the cpu target's pinned torch:
    the exception classes the cases name are looked up in it (without it validate says what it did not check)."""
    session.install("-e", ".")
    install_torch(session, "cpu")
    session.run("reprokit", "validate", *session.posargs)


@nox.session(name="new-case", reuse_venv=True, default=False)
def new_case(session: nox.Session) -> None:
    """Scaffold cases/ID, or make a case of a script: nox -s new-case -- ID [--from SCRIPT --raises CLASS]."""
    if not session.posargs:
        session.error("Usage: nox -s new-case -- ID [--from SCRIPT.py] [--raises CLASS | --stdout RE | --hang]")
    reprokit(session, "new-case")


@nox.session(reuse_venv=True, default=False)
def upstream(session: nox.Session) -> None:
    """Run ID's repro.py here and write reports/upstream/ID.md for PyTorch: nox -s upstream -- ID [--target T]."""
    if not session.posargs:
        session.error("Usage: nox -s upstream -- ID [--target T] [--force]")
    install_torch(session, "cpu")
    reprokit(session, "upstream", extras="[upstream]")


@nox.session(reuse_venv=True, default=False)
def minify(session: nox.Session) -> None:
    """Run PyTorch's minifier on a failing case: nox -s minify -- ID (writes cases/ID/minified_repro.py)."""
    if not session.posargs:
        session.error("Usage: nox -s minify -- ID")
    install_torch(session, "cpu")
    reprokit(session, "minify")


@nox.session(reuse_venv=True, default=False)
def backlog(session: nox.Session) -> None:
    """.github/workflows/backlog.yml over a local folder: `nox -s backlog -- DIR [--shards N] [--here ...]`: N shards
    (default 3) judged one after another into .out/backlog/shard-K (resumable), then merged into .out/backlog/merged."""
    if not session.posargs:
        session.error("Usage: nox -s backlog -- ISSUES_DIR [--shards N] [--here | --releases V...] [--jobs J]")
    folder, *rest = session.posargs
    shards = 3
    if "--shards" in rest:  # nox's own option, not the command's
        at = rest.index("--shards")
        shards, rest = int(rest[at + 1]), rest[:at] + rest[at + 2 :]
    install_torch(session, "cpu")
    session.install("-e", ".", "uv")
    out = ROOT / ".out" / "backlog"
    for k in range(1, shards + 1):
        session.run(
            "reprokit",
            "backlog",
            "--issues-json",
            folder,
            "--shard",
            f"{k}/{shards}",
            "--out",
            str(out / f"shard-{k}"),
            *rest,
        )
    session.run(
        "reprokit",
        "backlog",
        "--merge",
        *(str(out / f"shard-{k}") for k in range(1, shards + 1)),
        "--out",
        str(out / "merged"),
    )


def _pytest(session: nox.Session, *parts: tuple[str, str]) -> None:
    """Install the test environment, run each (name, marker expression) part on every core (pytest-xdist: each test
    is independent, in its own tmp_path; the 25 slowest are printed), and print the time each part and all took."""
    install_torch(session, "cpu")
    session.install("-e", ".[test]")
    if session.posargs:
        session.run("pytest", *session.posargs)
        return
    times = []
    for name, marker in parts:
        start = time.monotonic()
        session.run("pytest", "-q", "-rs", "-m", marker, "-n", "auto", "--dist", "loadgroup", "--durations=25")
        times.append(f"{name} {time.monotonic() - start:.0f} s")
    session.log(f"test time: {', '.join(times)}; tests took {sum_seconds(times):.0f} s in all")


def sum_seconds(parts: list[str]) -> float:
    return sum(float(p.rsplit(" ", 2)[-2]) for p in parts)


@nox.session(reuse_venv=True)
def tests(session: nox.Session) -> None:
    """The test suite: fast unit tests, then an end-to-end slice covering every path with real runs (578 s of tests on
    a fresh clone, 2 otherwise idle cores: bench/test-command/)."""
    _pytest(session, ("fast", "not e2e"), ("e2e", "e2e and not heavy"))


# The tests that run only where the runner is not root: warm mode (a warm run as root has no sandbox, so it is never
# started and these tests skip under `nox -s tests` as root, as CI's tests job runs). Of the 17, the 5 that need the
# drop to another user (test_containment's ROOT_ONLY) skip here too: a warm run never drops, so they hold of cold runs.
UNPRIVILEGED = ("-m", "e2e", "-k", "warm", "tests/test_warm.py", "tests/test_containment.py")
ROOT_ONLY_SKIP = "only a root runner can run the case as another user"


@nox.session(name="tests-unprivileged", reuse_venv=True, default=False)
def tests_unprivileged(session: nox.Session) -> None:
    """The warm-mode tests, as a user that is not root (CI's tests-unprivileged job); fails where one skips for any
    other reason than needing root."""
    if os.geteuid() == 0:
        session.error("run it as a user that is not root: as root no warm run starts and these tests skip")
    install_torch(session, "cpu")
    session.install("-e", ".[test]")
    said = session.run("pytest", "-q", "-rs", *UNPRIVILEGED, *session.posargs, silent=True) or ""
    print(said)
    if other := [line for line in said.splitlines() if line.startswith("SKIPPED") and ROOT_ONLY_SKIP not in line]:
        session.error(f"warm-mode tests skipped, which this session is for: {other}")


@nox.session(name="tests-heavy", reuse_venv=True, default=False)
def tests_heavy(session: nox.Session) -> None:
    """The heavy end-to-end tests: the whole article corpus in a container, the CUDA image, several torch releases."""
    _pytest(session, ("heavy", "heavy"))


@nox.session(reuse_venv=True, default=False)
def mutation(session: nox.Session) -> None:
    """Mutation-test the verdict and gating core with mutmut against the fast tests; prints the score."""
    session.install("-e", ".[test]", "mutmut>=3.3")
    session.run("python", "tools/mutation_score.py", *session.posargs)


@nox.session(reuse_venv=True, default=False)
def bench(session: nox.Session) -> None:
    """Print overhead, corpus wall vs ideal, render, site and triage times, warm/cold ratio, copy-out MiB/s."""
    install_torch(session, "cpu")
    session.install("-e", ".")
    # PYTHONSAFEPATH (python -P): `-m` would put the working directory, the repository's root, first on sys.path
    session.run("python", "-m", "reprokit.contrib.bench", *session.posargs, env={"PYTHONSAFEPATH": "1"})
    session.run("python", "-m", "reprokit.contrib.bench_copy_out", env={"PYTHONSAFEPATH": "1"})  # figure 9
    session.run("python", "-m", "reprokit.tracker.bench_triage", env={"PYTHONSAFEPATH": "1"})  # figure 10
    session.run("python", "-m", "reprokit.tracker.bench_backlog", env={"PYTHONSAFEPATH": "1"})  # figure 11


@nox.session(reuse_venv=True)
def lint(session: nox.Session) -> None:
    """Lint with ruff, check the package's import layers (import-linter contracts in pyproject.toml) and its types
    (mypy, configured in pyproject.toml: the package itself is installed, so that its dependencies' types are read)."""
    session.install(
        "-e", ".", "ruff", "import-linter>=2.1", "mypy", "types-PyYAML", "types-docker", "types-regex", "types-tabulate"
    )
    session.run("ruff", "check", "tools", "tests", "sweep", "noxfile.py")
    session.run("ruff", "format", "--check", "tools", "tests", "sweep", "noxfile.py")
    session.run("lint-imports", env={"PYTHONPATH": str(ROOT / "tools")})
    session.run("mypy")
