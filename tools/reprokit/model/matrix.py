"""The hardware targets: matrix.yaml, validated into one frozen `Matrix`."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from reprokit.model.schema import (
    CaseId,
    DeviceKind,
    DType,
    Family,
    IndexUrl,
    InputError,
    LabelText,
    PythonVersion,
    Strict,
    Token,
    describe_error,
    read_yaml,
)

# The variable that restricts a child process to some devices, per device kind; a child's value replaces the
# parent's, so the ids handed out are the parent's own ids (physical ones, or what the parent's variable lists).
VISIBLE_VAR = {"cuda": "CUDA_VISIBLE_DEVICES", "rocm": "HIP_VISIBLE_DEVICES", "npu": "ASCEND_RT_VISIBLE_DEVICES"}


class DeviceMatch(Strict):
    """How a target's hardware is recognised on the machine that runs it."""

    kind: DeviceKind
    name_pattern: str | None = None  # regex on torch.cuda.get_device_name()
    compute_capability: float | None = None  # CUDA major.minor, exact
    gfx_arch: Token | None = None  # ROCm gcnArchName prefix, e.g. gfx942


# What a device computes in, beyond float32 and float16 (which every device kind does): None = every device of the
# kind, a number = CUDA compute capability at least that (bfloat16 from Ampere, float8 from Ada).
DTYPE_SUPPORT: dict[str, dict[str, float | None]] = {
    "float64": {"cpu": None, "cuda": None, "rocm": None},
    "bfloat16": {"cpu": None, "cuda": 8.0, "rocm": None, "npu": None},
    "float8_e4m3fn": {"cuda": 8.9},
}


def device_supports(device: DeviceMatch, dtype: str) -> bool:
    """Whether a target's device computes in `dtype` (a script that fixes its own dtype runs where this holds)."""
    if dtype not in DTYPE_SUPPORT:
        return True
    kinds = DTYPE_SUPPORT[dtype]
    if device.kind not in kinds:
        return False
    least = kinds[device.kind]
    return least is None or (device.compute_capability is not None and device.compute_capability >= least)


class TorchPins(Strict):
    torch: Token
    torch_npu: Token | None = None
    # Where torch comes from, alone (pip --index-url): its own dependencies too, Triton included (each torch wheel
    # pins the Triton build it was made with, so none is pinned here); None = PyPI. Everything else comes from PyPI.
    index_url: IndexUrl | None = None
    # Releases run for the target's history (`nox -s history-<target>`), each in its own environment from the
    # registry; the pin above is what `repro-<target>` runs and the expected state gates.
    history: list[Token] = []
    extras: list[Token] = []  # the target's extra pinned packages (e.g. torchao for FP8 training on Hopper)


class Target(Strict):
    family: Family
    description: LabelText
    device: DeviceMatch
    base_image: Token
    pins: TorchPins
    python: PythonVersion = "3.11"  # the Python of the base image: the image's venv is made with python<X.Y>
    dtypes: list[DType]
    device_count: int = Field(default=1, ge=1)
    runner_labels: list[Token]
    fp8: bool = False  # the article's FP8 mixed-precision configuration


class Matrix(Strict):
    targets: dict[CaseId, Target]


def load_matrix(path: Path) -> Matrix:
    try:
        return Matrix.model_validate(read_yaml(path))
    except ValidationError as err:
        raise InputError(f"{path}: {describe_error(err)}") from None


def targets_listing(matrix: Matrix, exclude: list[str], as_json: bool, only: list[str] | None = None) -> list[str]:
    """`reprokit targets`: one line per target (name, family, description), or with as_json one line, the GitHub
    Actions matrix (`include`: target, family, runs-on) that CI fans out over; `only`: these targets alone (the
    backlog's GPU shard runs on one target's runners)."""
    import json

    unknown = sorted(set(only or ()) - set(matrix.targets))
    if unknown:
        raise InputError(f"--only {unknown[0]}: not a target of matrix.yaml ({', '.join(matrix.targets)})")
    chosen = {n: t for n, t in matrix.targets.items() if n not in exclude and (not only or n in only)}
    if as_json:
        return [
            json.dumps(
                {"include": [{"target": n, "family": t.family, "runs-on": t.runner_labels} for n, t in chosen.items()]}
            )
        ]
    return [f"{name:12} {t.family:7} {t.description}" for name, t in chosen.items()]
