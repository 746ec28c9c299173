"""y[idx] += y[idx] with repeated (negative, shifted) indices, compiled with dynamic=True, against eager.

Issue: https://github.com/pytorch/pytorch/issues/138908 (compiled result is 4x instead of 2x).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def bump(idx, table):
    idx = idx + 10
    table[idx] += table[idx]


torch.manual_seed(0)
idx = torch.full((1, 2), -10, dtype=torch.int64, device=device)  # both entries point at row 0 after the shift
table = torch.randn(2, 32, device=device, dtype=dtype)
expected = table.clone()
with torch.no_grad():
    bump(idx, expected)
    torch.compile(bump, dynamic=True)(idx, table)
torch.testing.assert_close(table, expected)
print("compiled in-place update matches eager")
