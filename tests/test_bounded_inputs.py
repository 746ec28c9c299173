"""Inputs a contributor (or an attacker) controls, read within bounds: a script for `new-case --from` is refused over
1 MB before anything reads it whole, an expression nested too deeply is one line (no RecursionError traceback), and
the syntax tree is built within a memory limit."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from reprokit.contrib import new_case, script_code
from reprokit.contrib.script_code import SCRIPT_LIMIT, facts, read_script
from reprokit.model.schema import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_a_script_over_the_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.py"
    with open(path, "wb") as fh:  # sparse: 24 MB that no reader could hold cheaply if it read them
        fh.truncate(24 << 20)
    with pytest.raises(InputError, match=r"huge.py: 25165824 bytes, more than the 1048576"):
        read_script(path)


def test_a_too_deep_expression_is_one_line(tmp_path):
    path = tmp_path / "deep.py"
    path.write_text("x = " + "1+" * 200_000 + "1\n")
    assert path.stat().st_size < SCRIPT_LIMIT
    with pytest.raises(InputError, match="nested too deeply for Python to read it"):
        read_script(path)
    with pytest.raises(InputError, match="nested too deeply"):  # the inference refuses it the same way
        facts(path.read_text())


def test_the_syntax_tree_is_built_within_a_memory_limit(tmp_path, monkeypatch):
    text = "xs = [" + "(1, 2.0, 'a'), " * 20_000 + "]\n"  # 300 KB of code, a syntax tree of tens of MB
    assert len(text) < SCRIPT_LIMIT
    monkeypatch.setattr(script_code, "PARSE_MEMORY", 8 << 20)
    with pytest.raises(InputError, match="its syntax tree needs more than 8 MiB"):
        facts(text)
    monkeypatch.undo()
    assert facts(text).requires() == {"devices": ["cpu"]}  # within the default limit it is read as before


def test_a_script_that_is_not_utf8_is_refused_in_one_line(tmp_path):
    path = tmp_path / "latin1.py"
    path.write_bytes(b"print('caf\xe9')\n")
    with pytest.raises(InputError, match=r"latin1.py: not UTF-8 \(byte 10\)"):
        read_script(path)


@pytest.mark.e2e
@pytest.mark.skipif(not hasattr(new_case, "read_script"), reason="new_case.create reads --from with read_script")
@pytest.mark.parametrize(
    "content, message",
    [
        (None, "more than the 1048576 a case script may have"),
        ("x = " + "1+" * 200_000 + "1\n", "nested too deeply for Python to read it"),
    ],
    ids=["oversized", "nested-too-deeply"],
)  # an id made of the 400 KB script would be in PYTEST_CURRENT_TEST, which
# every child inherits: execve refuses a variable that long ("Argument list too long")
def test_new_case_refuses_a_hostile_script_in_one_line(tmp_path, content, message):
    (tmp_path / "cases").mkdir()
    (tmp_path / "matrix.yaml").write_text((ROOT / "matrix.yaml").read_text())
    path = tmp_path / "attack.py"
    if content is None:
        with open(path, "wb") as fh:
            fh.truncate(24 << 20)
    else:
        path.write_text(content)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(tmp_path),
            "new-case",
            "attack",
            "--from",
            str(path),
            "--no-run",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
    )
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "cases" / "attack").exists()
