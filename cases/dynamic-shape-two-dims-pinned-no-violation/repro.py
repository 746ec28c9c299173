"""Two dynamic dims that guards jointly reduce to one shape: Dynamo should report a constraint violation.

Issue: https://github.com/pytorch/pytorch/issues/191833
"""
import os

import torch

torch.manual_seed(0)  # the same data every run: the verdict never depends on the draw

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def fn(x):
    a, b = x.shape
    if a > b:
        return x + 1
    if a < b:
        return x - 1
    if a + b != 10:
        return x + 2
    return x + 3  # only (5, 5) gets here


x = torch.randn(5, 5, device=device, dtype=dtype)
torch._dynamo.mark_dynamic(x, 0)
torch._dynamo.mark_dynamic(x, 1)
try:
    torch.compile(fn, backend="eager", fullgraph=True)(x)
except Exception as err:
    print("raised:", type(err).__name__)
else:
    raise AssertionError("both dynamic dims were specialized to 5 without a ConstraintViolationError")
