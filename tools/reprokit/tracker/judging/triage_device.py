"""The hardware an issue's script needs, read from its code as `new-case` reads it (a hard-coded "cuda" device or a
.cuda() call means a CUDA GPU; a torchrun program gets its launcher and ranks), and the run setting that gives it:
the target's device kind, so the sandbox binds that family's device nodes as it does for `reprokit run`. A script
that needs a GPU the target or this machine lacks is refused in one line before anything is built or run."""

from __future__ import annotations

import glob

from reprokit.contrib.script_code import facts
from reprokit.model.matrix import Matrix
from reprokit.model.schema import InputError
from reprokit.run.request import target_of
from reprokit.store.backlog_journal import NEEDS_A_GPU
from reprokit.tracker.judging import upstream_runs

NODES = {"cuda": "/dev/nvidia[0-9]*", "rocm": "/dev/kfd", "npu": "/dev/davinci[0-9]*"}


def gpu_targets(matrix: Matrix) -> list[str]:
    return [n for n, t in matrix.targets.items() if t.device.kind == "cuda" and not t.fp8]


def device_present(kind: str) -> bool:
    return kind == "cpu" or bool(glob.glob(NODES.get(kind, "/nonexistent")))


def setting(script: str, matrix: Matrix, target_name: str, python: str, timeout: float) -> upstream_runs.Setting:
    """How every run of the script is made on `target_name`; InputError where the script needs hardware it lacks."""
    target = target_of(matrix, target_name)
    kind = target.device.kind
    code = facts(script)
    if code.cuda_only and kind != "cuda":
        raise InputError(
            f"{NEEDS_A_GPU}: run with --target {' or '.join(gpu_targets(matrix)[:4])} on a "
            f"GPU machine (--target {target_name} is {kind}); nothing was run or recorded"
        )
    if not device_present(kind):
        raise InputError(
            f"--target {target_name} runs on a {kind} device and this machine has none "
            f"({NODES.get(kind)} is missing); nothing was run or recorded"
        )
    ranks = (code.world_size or 2) if code.torchrun else 1
    if ranks > 1 and kind != "cpu" and ranks > len(glob.glob(NODES[kind])):
        raise InputError(
            f"the script is a torchrun program of {ranks} ranks and this machine has "
            f"{len(glob.glob(NODES[kind]))} {kind} devices; nothing was run or recorded"
        )
    return upstream_runs.Setting(
        python, kind, "float32", timeout, launcher="torchrun" if code.torchrun else "python", world_size=ranks
    )
