"""A size read from tensor data (.item(), an unbacked SymInt) feeds slice/arange/reshape under fullgraph=True, dynamic=True.

capture_scalar_outputs=True makes .item() give an unresolved symbolic size on every release (without it, 2.8.0 and
2.9.1 stop at .item() itself, before any shape op sees the symbol). The compiled result is checked against eager.
Run: python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
torch._dynamo.config.capture_scalar_outputs = True


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
