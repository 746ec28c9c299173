"""Run the corpus inside a target's image: repository read-only, results writable, no network, non-root, limits,
and the family's device access. The runner inside is the same `reprokit run --host`, which places each run on its
devices as on a host (devices.py); the container gets the devices this runner may use, by id where it was given
some (its own CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES or ASCEND_RT_VISIBLE_DEVICES), else all of its family."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from reprokit.model.matrix import VISIBLE_VAR, Target

UID = 1000  # the image's unprivileged user
REPO, OUT = "/work/repo", "/work/out"  # where the repository (read-only) and the output folder sit inside
ASCEND_DEVICES = ["davinci_manager", "devmm_svm", "hisi_hdc"]
ASCEND_MOUNTS = [
    "/usr/local/dcmi",
    "/usr/local/bin/npu-smi",
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/Ascend/driver/version.info",
    "/etc/ascend_install.info",
]
GIB = 1 << 30
MEMORY_PER_JOB = 8 * GIB  # what one run (a torchrun pair included) may take of the host's memory
PIDS_PER_JOB = 512  # processes and threads: a run's ranks, compile workers and the threads of each


def docker_running() -> bool:
    try:
        import docker

        docker.from_env().ping()
        return True
    except Exception:  # noqa: BLE001 - no SDK, no socket, no daemon: all mean "run on the host"
        return False


def _listed(env: Mapping[str, str], kind: str) -> list[str]:
    return [p.strip() for p in env.get(VISIBLE_VAR[kind], "").split(",") if p.strip()]


def _groups(nodes: list[Path]) -> list[str]:
    """The groups owning the device nodes, by number: the container's user joins them to open the nodes (ROCm's
    render nodes belong to `render`, Ascend's to HwHiAiUser; the numbers differ between hosts and images)."""
    gids = set()
    for node in nodes:
        try:
            gids.add(node.stat().st_gid)
        except OSError:
            continue
    return [str(g) for g in sorted(gids - {0})]


def device_options(target: Target, env: Mapping[str, str] = os.environ, dev: Path = Path("/dev")) -> dict:
    """The docker SDK options that give the container its family's devices (and only the selected ones)."""
    import docker

    family = target.family
    if family == "cuda":
        if not any(dev.glob("nvidia[0-9]*")):  # no NVIDIA GPU here (a forced run): none to ask the runtime for
            return {}
        ids = _listed(env, "cuda")  # the NVIDIA runtime makes them 0..n-1 inside
        request = (
            docker.types.DeviceRequest(device_ids=ids, capabilities=[["gpu"]])
            if ids
            else docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])
        )
        return {"device_requests": [request]}
    if family == "rocm":
        nodes = [dev / "kfd", *sorted((dev / "dri").glob("renderD*")), *sorted((dev / "dri").glob("card*"))]
        selected = _listed(env, "rocm")
        return {
            "devices": [f"{dev / 'kfd'}:/dev/kfd", f"{dev / 'dri'}:/dev/dri"],
            "group_add": _groups(nodes),
            "security_opt": ["seccomp=unconfined"],
            "environment_extra": {"HIP_VISIBLE_DEVICES": ",".join(selected)} if selected else {},
        }
    if family == "ascend":
        davinci = sorted(p for p in dev.glob("davinci[0-9]*"))
        nodes = [p for p in davinci + [dev / name for name in ASCEND_DEVICES] if p.exists()]
        selected = _listed(env, "npu")
        return {
            "devices": [f"{p}:/dev/{p.name}" for p in nodes],
            "group_add": _groups(nodes),
            "volumes_extra": {m: {"bind": m, "mode": "ro"} for m in ASCEND_MOUNTS if Path(m).exists()},
            "environment_extra": {"ASCEND_RT_VISIBLE_DEVICES": ",".join(selected)} if selected else {},
        }
    return {}


def host_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


def memory_limit(jobs: int, env: Mapping[str, str] = os.environ, host: int | None = None) -> str:
    """The container's memory limit: REPROKIT_CONTAINER_MEMORY, else MEMORY_PER_JOB for each job, at most 90% of
    the host's memory (never under one job's share)."""
    if env.get("REPROKIT_CONTAINER_MEMORY"):
        return env["REPROKIT_CONTAINER_MEMORY"]
    host = host_memory() if host is None else host
    want = max(1, jobs) * MEMORY_PER_JOB
    cap = max(MEMORY_PER_JOB, int(host * 0.9)) if host else want
    return f"{min(want, cap) // (1 << 20)}m"


def config(
    tag: str,
    root: Path,
    results: Path,
    target_name: str,
    target: Target,
    request_json: str,
    jobs: int,
    env: Mapping[str, str] = os.environ,
    dev: Path = Path("/dev"),
) -> dict:
    """Every option of the container that runs the request (docker SDK `containers.create` keywords)."""
    options = device_options(target, env, dev)
    # Only the target's own store folder is writable, mounted by itself: its parents may be private (0700).
    volumes = {
        str(root): {"bind": REPO, "mode": "ro"},
        str(results): {"bind": f"{OUT}/results/{target_name}", "mode": "rw"},
        **options.pop("volumes_extra", {}),
    }
    # --network none leaves only loopback: rendezvous and collectives must bind to it.
    # REPROKIT_SANDBOX: the container is the runs' sandbox (Docker refuses bubblewrap the user namespaces it needs).
    environment = {
        "PYTHONPATH": f"{REPO}/tools",
        "HOME": "/home/repro",
        "GLOO_SOCKET_IFNAME": "lo",
        "REPROKIT_SANDBOX": "container",
        "NCCL_SOCKET_IFNAME": "lo",
        "NCCL_NVLS_ENABLE": "0",
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1",
        **options.pop("environment_extra", {}),
    }
    return dict(
        image=tag,
        command=["python", "-m", "reprokit", "--root", REPO, "run-request", request_json],
        # With no network the container's own hostname resolves to nothing; torchrun's rendezvous needs it to.
        user=f"{UID}:{UID}",
        network_mode="none",
        hostname="localhost",
        volumes=volumes,
        working_dir="/work",
        environment=environment,
        shm_size="4g",
        pids_limit=max(4096, PIDS_PER_JOB * max(1, jobs)),
        mem_limit=memory_limit(jobs, env),
        read_only=False,
        **options,
    )


def run(
    tag: str, root: Path, store_dir: Path, target_name: str, target: Target, request_json: str, jobs: int, log=print
) -> int:
    """Run the whole request (`reprokit run-request`, host mode inside) in the target's image; its records land in
    the store's folder of that target, mounted by itself."""
    import docker

    mine = store_dir / target_name
    mine.mkdir(parents=True, exist_ok=True)
    os.chmod(mine, 0o777)  # the container's user writes here  # noqa: S103
    container = docker.from_env().containers.create(**config(tag, root, mine, target_name, target, request_json, jobs))
    try:
        container.start()
        for chunk in container.logs(stream=True, follow=True):
            log(chunk.decode("utf-8", "replace").rstrip("\n"))
        return int(container.wait().get("StatusCode", 1))
    finally:
        container.remove(force=True)
