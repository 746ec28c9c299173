"""A tensor whose size comes from data (.item()) feeds reshape/arange under fullgraph=True, dynamic=True.

Run: python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def bucketize_rows(x, lengths):
    total = int(lengths.sum().item())  # data-dependent size: an unbacked SymInt under compile
    positions = torch.arange(total, device=x.device)
    return x.flatten()[:total].reshape(total, 1) * positions.unsqueeze(1).to(x.dtype)


torch.manual_seed(0)
x = torch.randn(6, 8, device=device, dtype=dtype)
lengths = torch.tensor([3, 5, 2], device=device)
compiled = torch.compile(bucketize_rows, fullgraph=True, dynamic=True)
torch.testing.assert_close(compiled(x, lengths), bucketize_rows(x, lengths))
print("compiled result matches eager")
