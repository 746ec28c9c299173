"""What a container run asks Docker for: the family's devices (by id where the runner was given some), the groups
that own the device nodes, limits that scale with the jobs. Checked on real device-node files and with a real
`docker create` + inspect (the engine stores the request as sent; starting it would need the GPU runtime)."""

import os
from pathlib import Path

import pytest
from reprokit.images import container
from reprokit.model.matrix import load_matrix

ROOT = Path(__file__).resolve().parents[1]
MATRIX = load_matrix(ROOT / "matrix.yaml")
GIB = 1 << 30


def test_memory_scales_with_the_jobs_up_to_most_of_the_host():
    assert container.memory_limit(2, env={}, host=64 * GIB) == f"{16 * 1024}m"
    assert container.memory_limit(12, env={}, host=256 * GIB) == f"{96 * 1024}m"
    assert container.memory_limit(16, env={}, host=64 * GIB) == f"{int(64 * GIB * 0.9) // (1 << 20)}m"
    assert container.memory_limit(16, env={"REPROKIT_CONTAINER_MEMORY": "40g"}, host=64 * GIB) == "40g"


def test_rocm_joins_the_groups_that_own_the_render_nodes(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to give files other groups")
    dev = tmp_path / "dev"
    (dev / "dri").mkdir(parents=True)
    for name, gid in (("kfd", 4242), ("dri/renderD128", 4343), ("dri/renderD129", 4343), ("dri/card0", 4444)):
        (dev / name).touch()
        os.chown(dev / name, 0, gid)
    options = container.device_options(MATRIX.targets["mi300x"], env={}, dev=dev)
    assert options["group_add"] == ["4242", "4343", "4444"]
    assert options["devices"] == [f"{dev}/kfd:/dev/kfd", f"{dev}/dri:/dev/dri"] and options["environment_extra"] == {}
    selected = container.device_options(MATRIX.targets["mi300x"], env={"HIP_VISIBLE_DEVICES": "2,3"}, dev=dev)
    assert selected["environment_extra"] == {"HIP_VISIBLE_DEVICES": "2,3"}


def test_ascend_passes_its_nodes_with_their_group(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to give files other groups")
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("davinci0", "davinci1", "davinci_manager", "devmm_svm", "hisi_hdc"):
        (dev / name).touch()
        os.chown(dev / name, 0, 1099)  # HwHiAiUser's group on that host
    options = container.device_options(MATRIX.targets["ascend910b"], env={"ASCEND_RT_VISIBLE_DEVICES": "1"}, dev=dev)
    assert options["devices"][:2] == [f"{dev}/davinci0:/dev/davinci0", f"{dev}/davinci1:/dev/davinci1"]
    assert len(options["devices"]) == 5 and options["group_add"] == ["1099"]
    assert options["environment_extra"] == {"ASCEND_RT_VISIBLE_DEVICES": "1"}


BASE = os.environ.get("REPROKIT_E2E_BASE", "local/debian:bookworm")


def _created(config: dict) -> dict:
    docker = pytest.importorskip("docker")
    if not container.docker_running():
        if os.environ.get("CI") == "true":
            pytest.fail("CI must provide a Docker engine")
        pytest.skip("no Docker engine here")
    client = docker.from_env()
    try:
        client.images.get(BASE)
    except docker.errors.ImageNotFound:
        pytest.skip(f"no local base image {BASE} (.ci/run makes one)")
    made = client.containers.create(**{**config, "image": BASE})
    try:
        return client.api.inspect_container(made.id)["HostConfig"]
    finally:
        made.remove(force=True)


def _config(tmp_path, target, env, jobs=4, gpus=4):
    dev = tmp_path / "dev"
    dev.mkdir(exist_ok=True)
    for i in range(gpus):  # what the NVIDIA driver makes on a GPU host
        (dev / f"nvidia{i}").touch()
    return container.config("unused", ROOT, tmp_path, target, MATRIX.targets[target], "{}", jobs, env=env, dev=dev)


def test_a_cuda_container_gets_the_runners_gpus_by_id(tmp_path):
    host = _created(_config(tmp_path, "h100", {"CUDA_VISIBLE_DEVICES": "1,3"}))
    assert host["DeviceRequests"] == [
        {"Driver": "", "Count": 0, "DeviceIDs": ["1", "3"], "Capabilities": [["gpu"]], "Options": {}}
    ]


def test_a_cuda_container_gets_every_gpu_when_the_runner_was_given_none(tmp_path):
    host = _created(_config(tmp_path, "h100", {}, jobs=12))
    (request,) = host["DeviceRequests"]
    assert request["Count"] == -1 and not request["DeviceIDs"] and request["Capabilities"] == [["gpu"]]
    assert host["Memory"] == int(container.memory_limit(12)[:-1]) << 20
    assert host["PidsLimit"] == 12 * container.PIDS_PER_JOB
    assert host["NetworkMode"] == "none" and host["ShmSize"] == 4 * GIB


def test_the_cpu_container_asks_for_no_device(tmp_path):
    host = _created(_config(tmp_path, "cpu", {"CUDA_VISIBLE_DEVICES": "0"}, jobs=2))
    assert not host.get("DeviceRequests") and not host.get("Devices") and host["PidsLimit"] == 4096


def test_a_host_without_nvidia_gpus_asks_for_none(tmp_path):
    """A forced run of a GPU target here: asking the runtime for GPUs would fail the start, so none are asked for."""
    host = _created(_config(tmp_path, "h100", {}, gpus=0))
    assert not host.get("DeviceRequests")
