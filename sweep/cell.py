"""One cell of the model sweep: one structure x one mode x one compile configuration x one dtype, standalone.

    SWEEP_MODEL=swin SWEEP_MODE=train SWEEP_CONFIG=fullgraph REPRO_DTYPE=bfloat16 python sweep/cell.py

For float8_e4m3fn the model runs in bfloat16 with torchao.float8.convert_to_float8_training (recipe from
SWEEP_FP8_RECIPE: tensorwise or rowwise), eager and compiled alike; without torchao the cell skips (exit 77), and so
does a structure of which no Linear became a Float8Linear (none has sizes torchao's float8 matmul takes): such a cell
would compile a bfloat16 model and say nothing of FP8.
Builds the model from sweep/models/<SWEEP_MODEL>.py (random weights, no downloads), runs it in float64 (reference),
in eager and compiled in the cell's dtype, and checks accuracy the way PyTorch's dashboard does
(torch._dynamo.utils.same with the float64 reference). Exits 0 when the compiled model runs and is accurate; raises
otherwise (an AssertionError for an accuracy failure); exits 77 (skip) when the model fails in eager already.
The last stdout line is `SWEEP_RESULT {json}`.
"""
import copy
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.utils._pytree as pytree
from torch._dynamo.utils import same

MODEL = os.environ.get("SWEEP_MODEL", "glu_mlp")
MODE = os.environ.get("SWEEP_MODE", "inference")  # inference | train
CONFIG = os.environ.get("SWEEP_CONFIG", "default")  # default | fullgraph | dynamic | max-autotune[-no-cudagraphs]
device = os.environ.get("REPRO_DEVICE", "cpu")
dtype_name = os.environ.get("REPRO_DTYPE", "float32")
FP8 = dtype_name.startswith("float8")
dtype = torch.bfloat16 if FP8 else getattr(torch, dtype_name)  # FP8: bf16 model, torchao float8 in every Linear
FP8_RECIPE = os.environ.get("SWEEP_FP8_RECIPE", "tensorwise")  # torchao's recipe names: tensorwise | rowwise
TOL = {torch.float32: 1e-3, torch.bfloat16: 4e-2, torch.float16: 4e-2}[dtype] * (4 if FP8 else 1)
COMPILE_KW = {"default": {}, "fullgraph": {"fullgraph": True}, "dynamic": {"dynamic": True},
              "max-autotune": {"mode": "max-autotune"},
              "max-autotune-no-cudagraphs": {"mode": "max-autotune-no-cudagraphs"}}[CONFIG]


def load_structure(name):
    path = Path(__file__).parent / "models" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"sweep_model_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Dynamo re-imports the module of the code it traces
    spec.loader.exec_module(module)
    return module


def to_fp8(model):
    """torchao's float8 training (the path users take): every nn.Linear whose sizes allow it becomes a Float8Linear."""
    try:
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training
    except ImportError as err:
        print(f"torchao.float8 is not importable here ({err}); FP8 cells run torchao's float8 training")
        sys.exit(77)
    return convert_to_float8_training(
        model, config=Float8LinearConfig.from_recipe_name(FP8_RECIPE),
        module_filter_fn=lambda mod, fqn: mod.in_features % 16 == 0 and mod.out_features % 16 == 0)


def cast(inputs, dt):
    return pytree.tree_map(lambda t: t.to(device=device, dtype=dt) if torch.is_tensor(t) and t.is_floating_point()
                           else (t.to(device) if torch.is_tensor(t) else t), inputs)


def floats(out):
    return [t for t in pytree.tree_leaves(out) if torch.is_tensor(t) and t.is_floating_point()]


def step(model, inputs):
    """Inference: the outputs. Train: loss, then the gradients of every parameter (one training step's work)."""
    if MODE == "inference":
        with torch.no_grad():
            return floats(model(*inputs))
    model.zero_grad(set_to_none=True)
    loss = sum(t.float().pow(2).mean() for t in floats(model(*inputs)))
    loss.backward()
    return [loss.detach()] + [p.grad for p in model.parameters() if p.grad is not None]


def timed(fn, repeat=5):
    times = []
    for _ in range(repeat):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


torch.manual_seed(0)
structure = load_structure(MODEL)
base, example = structure.build()
base.train(MODE == "train")
fp64_model = copy.deepcopy(base).to(device=device, dtype=torch.float64)
model = copy.deepcopy(base).to(device=device, dtype=dtype)
fp8_linears = None
if FP8:
    model = to_fp8(model)
    fp8_linears = sum(type(m).__name__ == "Float8Linear" for m in model.modules())
    if not fp8_linears:
        print(f"no Linear of {MODEL} became a Float8Linear (none has in/out features divisible by 16); "
              "the cell would measure bfloat16, not FP8")
        sys.exit(77)
eager_model = copy.deepcopy(model)
try:
    fp64_ref = step(fp64_model, cast(example, torch.float64))
except Exception as err:  # noqa: BLE001 - as the dashboard does: no float64 run, fall back to cosine similarity
    print(f"no float64 reference ({type(err).__name__}: {str(err).splitlines()[0][:120]}); using cosine similarity")
    fp64_ref = None
inputs = cast(example, dtype)
torch.manual_seed(1)
try:
    eager = step(eager_model, inputs)
except Exception as err:  # noqa: BLE001 - the dashboard's eager_1st_run_fail: nothing to compare compile against
    print(f"eager run fails: {type(err).__name__}: {str(err).splitlines()[0][:150]}")
    sys.exit(77)  # "not applicable here" (the automake/ctest SKIP code), recorded as skipped with this line

compiled_model = torch.compile(copy.deepcopy(model), **COMPILE_KW)
start = time.perf_counter()
torch.manual_seed(1)
compiled = step(compiled_model, inputs)
compile_seconds = time.perf_counter() - start
accurate = same(eager, compiled, fp64_ref=fp64_ref, tol=TOL, cos_similarity=MODE == "train" or fp64_ref is None,
               exact_dtype=False)
eager_s = timed(lambda: step(eager_model, inputs))
compiled_s = timed(lambda: step(compiled_model, inputs))
result = {"model": MODEL, "family": getattr(structure, "FAMILY", "?"), "source": getattr(structure, "SOURCE", "?"),
          "mode": MODE, "config": CONFIG, "dtype": dtype_name, "fp8_recipe": FP8_RECIPE if FP8 else None,
          "fp8_linears": fp8_linears, "compile_seconds": round(compile_seconds, 2),
          "eager_ms": round(eager_s * 1e3, 3), "compiled_ms": round(compiled_s * 1e3, 3),
          "speedup": round(eager_s / compiled_s, 3) if compiled_s else None, "accurate": bool(accurate),
          "fp64_reference": fp64_ref is not None}
print("SWEEP_RESULT " + json.dumps(result))
assert accurate, f"compiled {MODEL} is not accurate against the float64 reference (tol {TOL})"
