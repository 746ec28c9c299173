# /// script
# dependencies = ["nox>=2025.2.9", "PyYAML>=6"]
# ///
"""Thin sessions over the `reprokit` CLI: each installs what it needs, then calls one sub-command.

`nox -l` lists them; `nox -s repro-cpu` runs the corpus on this machine's CPU; `nox -s tests` runs the tests.
Arguments after `--` go to the sub-command unchanged, e.g. `nox -s repro-cpu -- --case 'dynamic-shape-*'`.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox
import yaml

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "venv"
nox.options.sessions = ["repro-cpu", "tests"]

ROOT = Path(__file__).parent
TARGETS = yaml.safe_load((ROOT / "matrix.yaml").read_text())["targets"]


def install_torch(session: nox.Session, target: str) -> None:
    """The target's torch pin: PyPI for the CPU target, the target's own index for accelerators."""
    pins = TARGETS[target]["pins"]
    args = [f"torch=={pins['torch']}"]
    if TARGETS[target]["family"] != "cpu" and pins.get("index_url"):
        args += ["--extra-index-url", pins["index_url"]]
    if os.environ.get("REPROKIT_WHEELHOUSE"):  # air-gapped machines: everything from local wheels
        args += ["--no-index", "--find-links", os.environ["REPROKIT_WHEELHOUSE"]]
    session.install(*args)


def reprokit(session: nox.Session, *args: str, target: str = "cpu", torch: bool = True) -> None:
    """The one shared helper: install reprokit (and torch, when the sub-command runs cases), then call it."""
    if torch:
        install_torch(session, target)
    session.install("-e", ".")
    session.run("reprokit", *args, *session.posargs)


for _name in TARGETS:

    @nox.session(name=f"repro-{_name}", reuse_venv=True, default=False)
    def _repro(session: nox.Session, _target: str = _name) -> None:
        reprokit(session, "run", "--target", _target, target=_target)

    _repro.__doc__ = f"Run every case on {TARGETS[_name]['description']} and render reports/{_name}.md."


@nox.session(reuse_venv=True)
def report(session: nox.Session) -> None:
    """Render reports/*.md from the committed results (no torch needed)."""
    reprokit(session, "report", torch=False)


@nox.session(reuse_venv=True)
def tests(session: nox.Session) -> None:
    """Run the test suite: unit tests and real end-to-end runs of real cases."""
    install_torch(session, "cpu")
    session.install("-e", ".[test]")
    session.run("pytest", *(session.posargs or ["-q"]))


@nox.session(reuse_venv=True)
def lint(session: nox.Session) -> None:
    """Lint the package, the noxfile and the tests with ruff."""
    session.install("ruff")
    session.run("ruff", "check", "tools", "tests", "noxfile.py")
