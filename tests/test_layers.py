"""The package's layers are enforced: `lint-imports` (the contracts in pyproject.toml) passes on the package as it
is and fails on a copy given one upward import, a third-party import in child/, or a cycle."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent))


def lint_imports(tools: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LINT_IMPORTS, str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env={"PYTHONPATH": str(tools), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "tools" / "reprokit", tmp_path / "reprokit", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def add_line(module: Path, line: str) -> None:
    with module.open("a", encoding="utf-8") as fh:
        fh.write(f"\n{line}\n")


pytestmark = pytest.mark.skipif(LINT_IMPORTS is None, reason="import-linter is not installed (pip install -e .[test])")


def test_the_package_keeps_its_layers(package_copy: Path):
    done = lint_imports(package_copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


def test_an_upward_import_breaks_the_layers_contract(package_copy: Path):
    add_line(package_copy / "reprokit" / "model" / "verdict.py", "import reprokit.publish.pages.report  # noqa")
    done = lint_imports(package_copy)
    assert done.returncode != 0
    assert "reprokit.model.verdict -> reprokit.publish.pages.report" in done.stdout


def test_child_may_not_import_a_third_party_library(package_copy: Path):
    add_line(package_copy / "reprokit" / "child" / "probe.py", "import yaml  # noqa")
    done = lint_imports(package_copy)
    assert done.returncode != 0
    assert "reprokit.child.probe -> yaml" in done.stdout


def test_a_cycle_between_two_modules_of_one_layer_breaks_the_acyclic_contract(package_copy: Path):
    # records imports verdict already; verdict importing records closes a cycle inside model/ (no layer is crossed)
    add_line(package_copy / "reprokit" / "model" / "verdict.py", "import reprokit.model.records  # noqa")
    done = lint_imports(package_copy)
    assert done.returncode != 0
    assert "No import cycle" in done.stdout and "BROKEN" in done.stdout


def logical_lines(text: str) -> list[int]:
    """The line on which each logical line (a statement, however the formatter wraps it) ends: sizes counted so are
    the same before and after `ruff format`, which splits one call over many physical lines."""
    import io
    import tokenize

    return [t.start[0] for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.NEWLINE]


def test_no_module_over_300_lines_and_no_long_function_without_its_reason():
    """Each module has one job (300 logical lines at most); a function over 60 logical lines says why in its docstring
    ("Long: ...")."""
    import ast

    too_long = []
    for path in sorted((ROOT / "tools" / "reprokit").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT / "tools")
        ends = logical_lines(text)
        if len(ends) > 300:
            too_long.append(f"{name}: {len(ends)} logical lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = sum(node.lineno <= end <= node.end_lineno for end in ends)
                if length > 60 and "Long:" not in (ast.get_docstring(node) or ""):
                    too_long.append(f"{name}: {node.name}() {length} logical lines")
    assert not too_long, too_long


def test_the_code_is_as_ruff_format_writes_it():
    """`nox -s lint` checks the formatting too: code a formatter owns reads the same in every module and every diff."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "tools", "tests", "sweep", "noxfile.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
