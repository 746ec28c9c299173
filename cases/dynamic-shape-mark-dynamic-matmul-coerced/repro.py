"""matmul(static (10, 10), dynamic (10, 10) with dim 0 marked dynamic): the inner dim is forced to 10.

Issue: https://github.com/pytorch/pytorch/issues/148040 (a hard error instead of a fallback).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def fn(static, dynamic):
    return torch.matmul(static, dynamic)


static = torch.randn(10, 10, device=device, dtype=dtype)
dynamic = torch.randn(10, 10, device=device, dtype=dtype)
torch._dynamo.mark_dynamic(dynamic, 0)
torch.testing.assert_close(torch.compile(fn, backend="aot_eager")(static, dynamic), fn(static, dynamic))
print("compiled matches eager")
