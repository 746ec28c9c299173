"""Runs one case script unchanged and records what happened, from inside the child process.

Usage (the runner does this): python probe.py SCRIPT [ARGS...]
Writes $REPROKIT_PROBE_DIR/probe-<rank>.json with the exception (if any), the stage it came from and dynamo's
counters. Standard library only and no import of reprokit, so it runs in any interpreter that has torch.
$REPROKIT_BACKEND=eager|aot_eager replaces the backend of every torch.compile call (the ablation ladder).
"""

import json
import os
import runpy
import sys
import traceback

# Checked in this order: the deepest subsystem in the traceback names the stage.
_STAGE_PATHS = (
    ("inductor", ("torch/_inductor/",)),
    ("aot_autograd", ("torch/_functorch/", "torch/_subclasses/", "torch/fx/experimental/proxy_tensor")),
    ("dynamo", ("torch/_dynamo/", "torch/fx/experimental/symbolic_shapes")),
    ("export", ("torch/export/", "torch/_export/", "torch/jit/")),
    ("distributed", ("torch/distributed/", "torch/nn/parallel/")),
)
_DYNAMO_EXC = ("Unsupported", "UserError", "TorchRuntimeError", "InternalTorchDynamoError", "UncapturedHigherOrderOpError")


def _chain(exc):
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def stage_of(exc):
    """dynamo | aot_autograd | inductor | export | distributed | runtime, from the exception chain."""
    chain = _chain(exc)
    files = [f.filename.replace(os.sep, "/") for e in chain for f in traceback.extract_tb(e.__traceback__)]
    names = [type(e).__name__ for e in chain]
    if any(n in ("BackendCompilerFailed", "InductorError", "LoweringException") for n in names):
        pass  # a backend failure: the paths below tell which part of the backend
    elif any(n in _DYNAMO_EXC for n in names):
        return "dynamo"
    for stage, parts in _STAGE_PATHS:
        if any(p in f for f in files for p in parts):
            return stage
    return "runtime"


def _qualname(exc):
    cls = type(exc)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _dynamo_counters():
    if "torch._dynamo" not in sys.modules:
        return None
    try:
        from torch._dynamo.utils import counters, get_compilation_metrics
    except Exception:  # a torch without these helpers: record nothing rather than guess
        return None
    metrics = get_compilation_metrics()
    return {
        "graph_breaks": int(sum(counters["graph_break"].values())),
        "graph_break_reasons": sorted(counters["graph_break"])[:5],
        "unique_graphs": int(counters["stats"]["unique_graphs"]),
        "recompiles": sum(1 for m in metrics if getattr(m, "recompile_reason", None)),
    }


def _force_backend(backend):
    import torch

    original = torch.compile

    def compile_with(model=None, *args, **kwargs):
        for key in ("backend", "mode", "options"):
            kwargs.pop(key, None)
        return original(model, *args, backend=backend, **kwargs)

    torch.compile = compile_with


def main():
    script = os.path.abspath(sys.argv[1])
    sys.argv = [script, *sys.argv[2:]]
    sys.path.insert(0, os.path.dirname(script))
    out_dir = os.environ.get("REPROKIT_PROBE_DIR", ".")
    rank = os.environ.get("RANK", "0")
    record = {"exception": None, "message": None, "stage": None, "exit_code": 0}
    if os.environ.get("REPROKIT_BACKEND"):
        _force_backend(os.environ["REPROKIT_BACKEND"])
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        record["exit_code"] = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - whatever the script raised is the observation
        traceback.print_exc()
        record.update(exception=_qualname(exc), stage=stage_of(exc), exit_code=1,
                      message=str(exc).strip()[:2000],
                      chain=[_qualname(e) for e in _chain(exc)][:6])
    record["dynamo"] = _dynamo_counters()
    with open(os.path.join(out_dir, f"probe-{rank}.json"), "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(record["exit_code"])  # skip atexit teardown hangs (e.g. a stuck process group)


if __name__ == "__main__":
    main()
