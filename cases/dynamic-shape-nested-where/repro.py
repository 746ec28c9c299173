"""Nested torch.where "ternary" conditions with broadcasting branches, compiled with fullgraph=True, dynamic=True.

Each branch has a different (broadcastable) shape, so the output shape is only known after propagating every level.
Run: python repro.py   (REPRO_DEVICE / REPRO_DTYPE select device and dtype)
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def piecewise(x, row_scale, col_bias):
    return torch.where(
        x > 1,
        x * row_scale,  # (n, 1) broadcast
        torch.where(x < -1, x + col_bias, torch.where(x.abs() < 0.5, x * x, -x)),  # (1, m) broadcast
    )


torch.manual_seed(0)
compiled = torch.compile(piecewise, fullgraph=True, dynamic=True)
for n, m in ((8, 5), (13, 7), (21, 3)):
    x = torch.randn(n, m, device=device, dtype=dtype) * 2
    row_scale = torch.randn(n, 1, device=device, dtype=dtype)
    col_bias = torch.randn(1, m, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x, row_scale, col_bias), piecewise(x, row_scale, col_bias))
print("compiled result matches eager for every shape")
