"""Fix: let Dynamo capture ops with data-dependent output shapes (torch._dynamo.config.capture_dynamic_output_shape_ops).

Same function as repro.py; with the option on, torch.where(condition) gives index tensors of unbacked symbolic length
instead of a graph break, so fullgraph=True holds. Checked against eager.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
torch._dynamo.config.capture_dynamic_output_shape_ops = True


def positive_entries(x):
    rows, cols = torch.where(x > 0)
    return x[rows, cols] * 2 + cols.to(x.dtype)


torch.manual_seed(0)
compiled = torch.compile(positive_entries, fullgraph=True, dynamic=True)
for n in (16, 24, 40):
    x = torch.randn(n, 8, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x), positive_entries(x))
print("compiled result matches eager for every size")
