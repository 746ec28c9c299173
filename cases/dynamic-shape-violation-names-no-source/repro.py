"""The constraint-violation error for a dynamic dim specialized by one comparison: does it name that line?

Issue: https://github.com/pytorch/pytorch/issues/136002
"""
import os

import torch

torch.manual_seed(0)  # the same data every run: the verdict never depends on the draw

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def f(x):
    if x.size(0) == 5:  # the specialization the error should point at
        return x * 2
    return x + 1


x = torch.randn(5, device=device, dtype=dtype)
torch._dynamo.mark_dynamic(x, 0)
try:
    torch.compile(f)(x)
except Exception as err:
    message = str(err)
else:
    print("no error: the dim was not specialized")
    raise SystemExit(0)
assert "x.size(0) == 5" in message, "the error does not name the line that specialized the dim:\n" + message[:600]
print("the error names the specializing line")
