"""Fix: select the column with index_select on the index tensor, so no Python scalar is read from the data.

x[:, i] with a 0-d index tensor i reads i's value to pick the column; x.index_select(1, i.reshape(1)) keeps it a
tensor, and the whole function compiles with fullgraph=True. Checked against the eager x[:, i].
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def model_forward(x):
    index = torch.argmax(x.mean(-1), dim=-1)
    return x.index_select(1, index.reshape(1)).squeeze(1)


def reference(x):
    return x[:, torch.argmax(x.mean(-1), dim=-1)]


torch.manual_seed(0)
compiled = torch.compile(model_forward, fullgraph=True, dynamic=True, backend="inductor")
for batch in (4, 6):
    x = torch.randn(batch, 10, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x), reference(x))
print("compiled result matches eager")
