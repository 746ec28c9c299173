"""torch.where(condition) with one argument inside torch.compile(fullgraph=True, dynamic=True).

With one argument torch.where returns a tuple of index tensors whose length depends on the data (the documented
equivalent of torch.nonzero(condition, as_tuple=True)); the compiled result is checked against eager.
Run: python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def positive_entries(x):
    rows, cols = torch.where(x > 0)
    return x[rows, cols] * 2 + cols.to(x.dtype)


torch.manual_seed(0)
compiled = torch.compile(positive_entries, fullgraph=True, dynamic=True)
for n in (16, 24):  # the count of positive entries changes with every input
    x = torch.randn(n, 8, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x), positive_entries(x))
print("compiled result matches eager")
