"""argmax and min(dim) of one tensor in one compiled function on CPU, against eager.

Issue: https://github.com/pytorch/pytorch/issues/94055
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def f(x):
    return torch.argmax(x, 1), torch.min(x, 1).values


x = torch.randn(6, 19, device=device, dtype=dtype)
for got, want in zip(torch.compile(f)(x), f(x)):
    torch.testing.assert_close(got, want)
print("compiled matches eager")
