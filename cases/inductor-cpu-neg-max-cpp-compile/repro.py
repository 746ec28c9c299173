"""max over a dimension of a negated tensor (values and indices), compiled on CPU, against eager.

Issue: https://github.com/pytorch/pytorch/issues/93380
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def f(x):
    v, i = torch.max(torch.neg(x), dim=1)
    return v, i


x = torch.randn(8, 17, device=device, dtype=dtype)
for got, want in zip(torch.compile(f)(x), f(x)):
    torch.testing.assert_close(got, want)
print("compiled matches eager")
