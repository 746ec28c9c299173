"""vector_norm of x[x > 0] (a size known only at run time), exported; the reference checks numel() == 0.

Issue: https://github.com/pytorch/pytorch/issues/116336
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

class Norm(torch.nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(x[x > 0])


x = torch.randn(32, device=device, dtype=dtype)
ep = torch.export.export(Norm(), (x,))
torch.testing.assert_close(ep.module()(x), Norm()(x))
print("exported program matches eager")
