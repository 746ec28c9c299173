"""Workaround: de-duplicate the indices first (the same update, without repeated writes), checked against eager.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def bump(idx, table):
    idx = torch.unique(idx + 10)
    table[idx] += table[idx]


torch.manual_seed(0)
idx = torch.full((1, 2), -10, dtype=torch.int64, device=device)
table = torch.randn(2, 32, device=device, dtype=dtype)
expected = table.clone()
with torch.no_grad():
    bump(idx, expected)
    torch.compile(bump)(idx, table)
torch.testing.assert_close(table, expected)
print("compiled in-place update matches eager")
