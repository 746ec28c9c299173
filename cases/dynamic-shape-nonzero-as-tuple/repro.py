"""torch.nonzero(..., as_tuple=True) inside torch.compile(fullgraph=True, dynamic=True).

The tuple's tensors have a data-dependent length; the compiled result is checked against eager.
Run: python repro.py   (REPRO_DEVICE=cuda REPRO_DTYPE=float16 to change device / dtype)
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def positive_entries(x):
    rows, cols = torch.nonzero(x > 0, as_tuple=True)
    return x[rows, cols] * 2 + cols.to(x.dtype)


torch.manual_seed(0)
x = torch.randn(16, 8, device=device, dtype=dtype)
compiled = torch.compile(positive_entries, fullgraph=True, dynamic=True)
torch.testing.assert_close(compiled(x), positive_entries(x))
print("compiled result matches eager")
