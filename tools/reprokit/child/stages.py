"""Which part of torch raised an exception, from its chain's tracebacks: the probe's `stage` (loaded by the probe from
its own folder, by path: standard library only)."""

from __future__ import annotations

import os
import traceback

# Checked in this order: the deepest subsystem in the traceback names the stage.
_STAGE_PATHS = (
    ("inductor", ("torch/_inductor/",)),
    ("aot_autograd", ("torch/_functorch/", "torch/_subclasses/", "torch/fx/experimental/proxy_tensor")),
    ("dynamo", ("torch/_dynamo/", "torch/fx/experimental/symbolic_shapes")),
    ("export", ("torch/export/", "torch/_export/", "torch/jit/")),
    ("distributed", ("torch/distributed/", "torch/nn/parallel/")),
)
_DYNAMO_EXC = (
    "Unsupported",
    "UserError",
    "TorchRuntimeError",
    "InternalTorchDynamoError",
    "UncapturedHigherOrderOpError",
)


def chain(exc: BaseException | None) -> list[BaseException]:
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def stage_of(exc: BaseException) -> str:
    """dynamo | aot_autograd | inductor | export | distributed | runtime, from the exception chain."""
    links = chain(exc)
    files = [f.filename.replace(os.sep, "/") for e in links for f in traceback.extract_tb(e.__traceback__)]
    names = [type(e).__name__ for e in links]
    if any(n in ("BackendCompilerFailed", "InductorError", "LoweringException") for n in names):
        pass  # a backend failure: the paths below tell which part of the backend
    elif any(n in _DYNAMO_EXC for n in names):
        return "dynamo"
    for stage, parts in _STAGE_PATHS:
        if any(p in f for f in files for p in parts):
            return stage
    return "runtime"


def qualname(exc: BaseException) -> str:
    cls = type(exc)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
