"""Fixed upstream (the issue is closed): int8 / int16 / uint8 elementwise + reduction kernels compiled on CPU, checked
exactly against eager.

The issue was C++ compile errors in the kernels for integer types narrower than int32. Integer results
must be exact, so the script compares with torch.equal (and the dtype) for each type.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(a, b):
    c = a * b + a
    return c.amax(0), torch.maximum(a, b)


torch.manual_seed(0)
for dt in (torch.int8, torch.int16, torch.uint8):
    a = torch.randint(0, 10, (16, 33), device=device, dtype=dt)
    b = torch.randint(0, 10, (16, 33), device=device, dtype=dt)
    for got, want in zip(torch.compile(f, fullgraph=True)(a, b), f(a, b)):
        assert got.dtype == want.dtype and torch.equal(got, want), (dt, got, want)
    torch._dynamo.reset()
print("compiled matches eager exactly for int8, int16, uint8")
