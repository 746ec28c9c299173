"""Data-dependent indexing x[:, torch.argmax(x.mean(-1), dim=-1)] on a 2-D input, under fullgraph=True, dynamic=True.

The article's section 1 example gives no input shape. Here x is (batch, 10): x.mean(-1) has one value per row, so
the argmax is a 0-d tensor and x[:, index] selects one column by a value computed from the data. The 3-D input is
the case dynamic-shape-argmax-indexing. The compiled result is checked against eager.
Run: python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def model_forward(x):
    return x[:, torch.argmax(x.mean(-1), dim=-1)]


torch.manual_seed(0)
compiled = torch.compile(model_forward, fullgraph=True, dynamic=True, backend="inductor")
for batch in (4, 6):  # at most 10 rows, so the row index is also a valid column index
    x = torch.randn(batch, 10, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x), model_forward(x))
print("compiled result matches eager")
