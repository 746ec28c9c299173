"""x[: sym_min(x.shape[0], 1000)] exported with a dynamic batch dim, then run against eager.

Issue: https://github.com/pytorch/pytorch/issues/108830
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

class Head(torch.nn.Module):
    def forward(self, x):
        n = torch.sym_min(x.shape[0], 1000)
        return x[:n] * 2


x = torch.randn(12, 4, device=device, dtype=dtype)
ep = torch.export.export(Head(), (x,), dynamic_shapes={"x": {0: torch.export.Dim("batch", min=2, max=4096)}})
y = torch.randn(20, 4, device=device, dtype=dtype)
torch.testing.assert_close(ep.module()(y), Head()(y))
print("exported program matches eager")
