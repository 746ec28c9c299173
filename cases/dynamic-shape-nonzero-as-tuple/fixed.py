"""Fix: let Dynamo capture ops with data-dependent output shapes (torch._dynamo.config).

Same function as repro.py; capture_dynamic_output_shape_ops makes nonzero produce unbacked symbolic sizes
instead of a graph break, so fullgraph=True holds. Checked against eager (default tolerances of assert_close).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
torch._dynamo.config.capture_dynamic_output_shape_ops = True


def positive_entries(x):
    rows, cols = torch.nonzero(x > 0, as_tuple=True)
    return x[rows, cols] * 2 + cols.to(x.dtype)


torch.manual_seed(0)
compiled = torch.compile(positive_entries, fullgraph=True, dynamic=True)
for n in (16, 24, 40):  # several sizes: the count of positive entries changes every call
    x = torch.randn(n, 8, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x), positive_entries(x))
print("compiled result matches eager for every size")
