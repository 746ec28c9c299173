"""Fix: torch._dynamo.maybe_mark_dynamic, which allows the dim to be specialized.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def fn(static, dynamic):
    return torch.matmul(static, dynamic)


static = torch.randn(10, 10, device=device, dtype=dtype)
dynamic = torch.randn(10, 10, device=device, dtype=dtype)
torch._dynamo.maybe_mark_dynamic(dynamic, 0)
torch.testing.assert_close(torch.compile(fn, backend="aot_eager")(static, dynamic), fn(static, dynamic))
print("compiled matches eager")
