"""Fix: mask instead of boolean indexing: vector_norm(torch.where(x > 0, x, 0)) has the same value as
vector_norm(x[x > 0]) and a static shape.

x[x > 0] has a size known only at run time, and the norm's empty-input check (numel() == 0) guards on it: a
data-dependent guard. Zeroing the excluded entries keeps the shape of x, so nothing depends on the data; zeros add
nothing to a 2-norm. The exported program is checked against eager's boolean-indexed norm, also on an input with no
positive entry.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


class Norm(torch.nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(torch.where(x > 0, x, 0))


x = torch.randn(32, device=device, dtype=dtype)
ep = torch.export.export(Norm(), (x,))
for inp in (x, -x.abs()):
    torch.testing.assert_close(ep.module()(inp), torch.linalg.vector_norm(inp[inp > 0]))
print("exported masked norm matches eager's boolean-indexed norm")
