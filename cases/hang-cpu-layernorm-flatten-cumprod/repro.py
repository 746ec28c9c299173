"""LayerNorm followed by flatten and cumprod over 4096 elements, compiled on CPU.

Issue: https://github.com/pytorch/pytorch/issues/181638 (hangs; each part alone compiles).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

torch.manual_seed(0)
norm = torch.nn.LayerNorm([8]).to(device)


def f(x):
    return torch.cumprod(torch.flatten(norm(x), 0), 0)


x = torch.randn(8, 8, 8, 8, device=device, dtype=dtype)
with torch.no_grad():
    torch.testing.assert_close(torch.compile(f)(x), f(x), equal_nan=True)
print("compiled matches eager")
