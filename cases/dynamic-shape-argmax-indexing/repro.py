"""Data-dependent indexing x[:, torch.argmax(x.mean(-1), dim=-1)] on a 3-D input, under fullgraph=True, dynamic=True.

The article's section 1 example gives no input shape. Here x is (batch, 10, 16): the index is a 1-D tensor (one
position per batch row), i.e. advanced indexing. The 2-D input (batch, columns), where the index is a 0-d tensor,
is the case dynamic-shape-argmax-indexing-2d. The compiled result is checked against eager.
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
for batch in (4, 6):
    x = torch.randn(batch, 10, 16, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x), model_forward(x))
print("compiled result matches eager")
