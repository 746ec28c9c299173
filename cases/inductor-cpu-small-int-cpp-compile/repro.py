"""Integer types narrower than int32 through a compiled elementwise + reduction kernel on CPU, against eager.

Issue: https://github.com/pytorch/pytorch/issues/96487
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def f(a, b):
    c = a * b + a
    return c.amax(0), torch.maximum(a, b)


for dt in (torch.int8, torch.int16, torch.uint8):
    a = torch.randint(0, 10, (16, 33), device=device, dtype=dt)
    b = torch.randint(0, 10, (16, 33), device=device, dtype=dt)
    for got, want in zip(torch.compile(f)(a, b), f(a, b)):
        torch.testing.assert_close(got, want)
    torch._dynamo.reset()
print("compiled matches eager for int8, int16, uint8")
