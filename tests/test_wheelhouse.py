"""The wheelhouse: what `reprokit wheelhouse` downloads (torch from its index alone, for the image's Python), the
check that refuses another family's torch build, and the loopback server a build installs from."""

import urllib.request
from pathlib import Path

import pytest
from reprokit.images import dockerfiles, wheelhouse
from reprokit.images.build_log import BuildLog
from reprokit.model.matrix import load_matrix
from reprokit.model.schema import InputError

ROOT = Path(__file__).resolve().parents[1]
MATRIX = load_matrix(ROOT / "matrix.yaml")


def _folder(tmp_path, *names):
    for name in names:
        (tmp_path / name).write_bytes(b"")
    return tmp_path


def test_torch_is_downloaded_from_its_index_alone_for_the_images_python(tmp_path):
    h100 = MATRIX.targets["h100"]
    first, second = wheelhouse.download_commands(
        dockerfiles.torch_packages(h100), dockerfiles.packages(h100), tmp_path, "3.11", h100.pins.index_url
    )
    assert first[first.index("--index-url") + 1] == h100.pins.index_url and first[-1] == "torch==2.13.0"
    assert "torch==2.13.0" not in second and "--index-url" not in second
    assert second[second.index("--find-links") + 1] == str(tmp_path)  # torch's need met by the wheel just fetched
    for command in (first, second):
        assert command[command.index("--python-version") + 1] == "3.11" and "--only-binary=:all:" in command
        assert "--platform=manylinux_2_28_x86_64" in command or "--platform=manylinux_2_28_aarch64" in command


def test_a_cpu_build_of_torch_is_refused_for_a_cuda_image(tmp_path):
    folder = _folder(tmp_path, "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "rich-15.0.0-py3-none-any.whl")
    with pytest.raises(InputError, match=r"not a cuda build of torch .*PIP_FIND_LINKS"):
        wheelhouse.check(folder, "h100", MATRIX.targets["h100"])


def test_two_builds_of_torch_are_refused(tmp_path):
    folder = _folder(
        tmp_path,
        "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl",
    )
    with pytest.raises(InputError, match="2 torch-2.13.0 builds"):
        wheelhouse.check(folder, "h100", MATRIX.targets["h100"])


def test_each_family_accepts_its_own_build(tmp_path):
    def pin(name):
        return MATRIX.targets[name].pins.torch

    cases = {
        "h100": f"torch-{pin('h100')}-cp311-cp311-manylinux_2_28_x86_64.whl",  # PyPI's Linux build: CUDA
        "a100": f"torch-{pin('a100')}+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
        "mi300x": f"torch-{pin('mi300x')}+rocm6.4-cp312-cp312-manylinux_2_28_x86_64.whl",
        "cpu": f"torch-{pin('cpu')}+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
        "ascend910b": f"torch-{pin('ascend910b')}-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
    }
    for name, wheel in cases.items():
        (tmp_path / name).mkdir()
        assert wheelhouse.check(_folder(tmp_path / name, wheel), name, MATRIX.targets[name]) == [wheel]
    # The cpu target also takes PyPI's unlabelled x86-64 wheel (a CUDA build, which runs on the CPU), never a
    # labelled CUDA or ROCm build.
    pypi = f"torch-{pin('cpu')}-cp311-cp311-manylinux_2_28_x86_64.whl"
    (tmp_path / "pypi").mkdir()
    assert wheelhouse.check(_folder(tmp_path / "pypi", pypi), "cpu", MATRIX.targets["cpu"]) == [pypi]
    (tmp_path / "cu128").mkdir()
    with pytest.raises(InputError, match="not a cpu build"):
        wheelhouse.check(
            _folder(tmp_path / "cu128", f"torch-{pin('cpu')}+cu128-cp311-cp311-manylinux_2_28_x86_64.whl"),
            "cpu",
            MATRIX.targets["cpu"],
        )
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=f"no torch-{pin('h100')} wheel"):
        wheelhouse.check(tmp_path / "empty", "h100", MATRIX.targets["h100"])


def test_the_wheelhouse_is_served_on_the_loopback_only_while_the_build_runs(tmp_path):
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-x.whl").write_bytes(b"wheel bytes")
    with wheelhouse.served(tmp_path) as url:
        assert url.startswith("http://127.0.0.1:")
        listing = urllib.request.urlopen(url, timeout=10).read().decode()
        assert 'href="torch-2.13.0%2Bcpu-cp311-cp311-x.whl"' in listing
        assert urllib.request.urlopen(url + "torch-2.13.0%2Bcpu-cp311-cp311-x.whl", timeout=10).read() == b"wheel bytes"
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=5)


def test_the_build_log_shows_whole_lines_as_they_come():
    shown = []
    with BuildLog("t", shown.append, terminal=False) as log:
        for chunk in ("Step 1/3 : FROM x\n", " ---> abc\nStep 2/3 : RUN pip", " install torch\n", "pyth", "on 3.11"):
            log.feed(chunk)
        assert log.step == "Step 2/3 : RUN pip install torch"
    assert shown == ["Step 1/3 : FROM x", " ---> abc", "Step 2/3 : RUN pip install torch", "python 3.11"]
