"""Replicate padding whose result is both added to itself and returned, compiled on CPU vs eager.

Issue: https://github.com/pytorch/pytorch/issues/115157
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def f(x):
    pad = torch.nn.functional.pad(torch.abs(x), (0, 24, 34, 0), mode="replicate")
    return torch.add(pad, pad), pad


torch.manual_seed(0)
x = torch.randn(1, 3, 41, 51, device=device, dtype=dtype)
for got, want in zip(torch.compile(f)(x), f(x)):
    torch.testing.assert_close(got, want)
print("compiled matches eager")
