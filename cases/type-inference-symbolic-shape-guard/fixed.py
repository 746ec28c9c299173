"""Fix: compute the choice as a tensor (no Python comparison on the unbacked size), so the function is one graph.

The scale is min(1, CAPACITY / total) computed from the lengths tensor; the kept slice still has the unbacked size,
which slicing handles with torch._check bounds. Checked against the eager version with the Python branch.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
torch._dynamo.config.capture_scalar_outputs = True
CAPACITY = 8


def route_branchless(x, lengths):
    count = lengths.sum()
    total = int(count.item())
    torch._check(total >= 0)
    torch._check(total <= x.numel())
    scale = torch.clamp(CAPACITY / count.to(x.dtype), max=1.0)
    return x.flatten()[:total] * scale


def route(x, lengths):  # the eager reference with the Python branch
    total = int(lengths.sum().item())
    kept = x.flatten()[:total]
    return kept * (CAPACITY / total) if total > CAPACITY else kept


torch.manual_seed(0)
x = torch.randn(6, 8, device=device, dtype=dtype)
compiled = torch.compile(route_branchless, fullgraph=True, dynamic=True)
for lengths in ([3, 5, 2], [1, 2]):
    lengths = torch.tensor(lengths, device=device)
    torch.testing.assert_close(compiled(x, lengths), route(x, lengths))
print("compiled result matches eager for both counts")
