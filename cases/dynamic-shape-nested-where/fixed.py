"""Fix: one torch.where per piece, selecting from precomputed masks (no nesting), checked against eager."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def piecewise_flat(x, row_scale, col_bias):
    hi, lo, small = x > 1, x < -1, x.abs() < 0.5
    out = -x
    out = torch.where(small, x * x, out)
    out = torch.where(lo, x + col_bias, out)
    return torch.where(hi, x * row_scale, out)


def piecewise(x, row_scale, col_bias):  # the nested original, as the eager reference
    return torch.where(x > 1, x * row_scale,
                       torch.where(x < -1, x + col_bias, torch.where(x.abs() < 0.5, x * x, -x)))


torch.manual_seed(0)
compiled = torch.compile(piecewise_flat, fullgraph=True, dynamic=True)
for n, m in ((8, 5), (13, 7), (21, 3)):
    x = torch.randn(n, m, device=device, dtype=dtype) * 2
    row_scale = torch.randn(n, 1, device=device, dtype=dtype)
    col_bias = torch.randn(1, m, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x, row_scale, col_bias), piecewise(x, row_scale, col_bias))
print("compiled result matches eager for every shape")
