"""Run the corpus inside a target's image: repository read-only, results writable, no network, non-root, limits,
and the family's device access. The runner inside is the same `reprokit run --host`."""

from __future__ import annotations

import os
from pathlib import Path

from .schema import Target

UID = 1000  # the image's unprivileged user
REPO, OUT = "/work/repo", "/work/out"  # where the repository (read-only) and the output folder sit inside
ASCEND_DEVICES = ["/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]
ASCEND_MOUNTS = ["/usr/local/dcmi", "/usr/local/bin/npu-smi", "/usr/local/Ascend/driver/lib64",
                 "/usr/local/Ascend/driver/version.info", "/etc/ascend_install.info"]


def docker_running() -> bool:
    try:
        import docker

        docker.from_env().ping()
        return True
    except Exception:  # noqa: BLE001 - no SDK, no socket, no daemon: all mean "run on the host"
        return False


def device_options(target: Target) -> dict:
    import docker

    family = target.family
    if family == "cuda":
        return {"device_requests": [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]}
    if family == "rocm":
        return {"devices": ["/dev/kfd:/dev/kfd", "/dev/dri:/dev/dri"], "group_add": ["video"],
                "security_opt": ["seccomp=unconfined"]}
    if family == "ascend":
        davinci = sorted(str(p) for p in Path("/dev").glob("davinci[0-9]*"))
        return {"devices": [f"{d}:{d}" for d in davinci + ASCEND_DEVICES if Path(d).exists()],
                "volumes_extra": {m: {"bind": m, "mode": "ro"} for m in ASCEND_MOUNTS if Path(m).exists()}}
    return {}


def run(tag: str, root: Path, store_dir: Path, target_name: str, target: Target, request_json: str,
        log=print) -> int:
    """Run the whole request (`reprokit run-request`, host mode inside) in the target's image; its records land in
    the store's folder of that target, mounted by itself."""
    import docker

    mine = store_dir / target_name
    mine.mkdir(parents=True, exist_ok=True)
    os.chmod(mine, 0o777)  # the container's user writes here  # noqa: S103
    options = device_options(target)
    # Only the target's own store folder is writable, mounted by itself: its parents may be private (0700).
    volumes = {str(root): {"bind": REPO, "mode": "ro"},
               str(mine): {"bind": f"{OUT}/results/{target_name}", "mode": "rw"},
               **options.pop("volumes_extra", {})}
    command = ["python", "-m", "reprokit", "--root", REPO, "run-request", request_json]
    container = docker.from_env().containers.run(
        # With no network the container's own hostname resolves to nothing; torchrun's rendezvous needs it to.
        tag, command, detach=True, user=f"{UID}:{UID}", network_mode="none", hostname="localhost", volumes=volumes,
        working_dir="/work",
        # --network none leaves only loopback: rendezvous and collectives must bind to it.
        environment={"PYTHONPATH": f"{REPO}/tools", "HOME": "/home/repro", "GLOO_SOCKET_IFNAME": "lo",
                     "NCCL_SOCKET_IFNAME": "lo", "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                     "NVSHMEM_DISABLE_NVLS": "1"},
        shm_size="4g", pids_limit=4096, mem_limit=os.environ.get("REPROKIT_CONTAINER_MEMORY", "16g"),
        read_only=False, **options)
    try:
        for chunk in container.logs(stream=True, follow=True):
            log(chunk.decode("utf-8", "replace").rstrip("\n"))
        return int(container.wait().get("StatusCode", 1))
    finally:
        container.remove(force=True)
