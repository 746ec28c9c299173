"""One cell of the model sweep: one structure x one mode x one compile configuration x one dtype, standalone.

    SWEEP_MODEL=swin SWEEP_MODE=train SWEEP_CONFIG=fullgraph REPRO_DTYPE=bfloat16 python sweep/cell.py

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
dtype = torch.bfloat16 if FP8 else getattr(torch, dtype_name)  # FP8: bf16 model, FP8 matmuls in every Linear
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


def fp8_matmul(x2, weight):
    """x2 @ weight.t() with torch._scaled_mm in float8_e4m3fn (dynamic per-tensor scales), output in x2's dtype."""
    fmax = torch.finfo(torch.float8_e4m3fn).max
    xs = x2.abs().amax().float().clamp(min=1e-12) / fmax
    ws = weight.abs().amax().float().clamp(min=1e-12) / fmax
    xq = (x2.float() / xs).clamp(-fmax, fmax).to(torch.float8_e4m3fn)
    wq = (weight.float() / ws).clamp(-fmax, fmax).to(torch.float8_e4m3fn)
    return torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=x2.dtype)


class FP8MatMul(torch.autograd.Function):
    """FP8 forward, bf16 backward: torch._scaled_mm has no derivative, so training recipes wrap it like this."""

    @staticmethod
    def forward(ctx, x2, weight):
        ctx.save_for_backward(x2, weight)
        return fp8_matmul(x2, weight)

    @staticmethod
    def backward(ctx, grad):
        x2, weight = ctx.saved_tensors
        return grad @ weight.to(grad.dtype), grad.t() @ x2.to(grad.dtype)


class FP8Linear(torch.nn.Module):
    """nn.Linear whose matmul runs in float8_e4m3fn (forward) with a bf16 backward."""

    def __init__(self, linear):
        super().__init__()
        self.weight, self.bias = linear.weight, linear.bias

    def forward(self, x):
        shape = x.shape
        out = FP8MatMul.apply(x.reshape(-1, shape[-1]), self.weight)
        out = out if self.bias is None else out + self.bias
        return out.reshape(*shape[:-1], -1)


def to_fp8(model):
    for name, child in model.named_children():
        if isinstance(child, torch.nn.Linear) and child.in_features % 16 == 0 and child.out_features % 16 == 0:
            setattr(model, name, FP8Linear(child))
        else:
            to_fp8(child)
    return model


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
if FP8:
    model = to_fp8(model)
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
          "mode": MODE, "config": CONFIG, "dtype": dtype_name, "compile_seconds": round(compile_seconds, 2),
          "eager_ms": round(eager_s * 1e3, 3), "compiled_ms": round(compiled_s * 1e3, 3),
          "speedup": round(eager_s / compiled_s, 3) if compiled_s else None, "accurate": bool(accurate),
          "fp64_reference": fp64_ref is not None}
print("SWEEP_RESULT " + json.dumps(result))
assert accurate, f"compiled {MODEL} is not accurate against the float64 reference (tol {TOL})"
