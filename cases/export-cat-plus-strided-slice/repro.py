"""cat of two inputs plus a stride-2 slice of a third, exported with a named Dim per dim.

Issue: https://github.com/pytorch/pytorch/issues/146315 (works only with Dim.DYNAMIC).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

class M(torch.nn.Module):
    def forward(self, x, y, z):
        return torch.cat((x, y), dim=1) + z[:, ::2]


x, y, z = torch.randn(2, 3, device=device), torch.randn(2, 5, device=device), torch.randn(2, 16, device=device)
Dim = torch.export.Dim
batch, dx, dy, dz = Dim("batch"), Dim("dx"), Dim("dy"), Dim("dz")
ep = torch.export.export(M(), (x, y, z), dynamic_shapes={"x": {0: batch, 1: dx}, "y": {0: batch, 1: dy},
                                                        "z": {0: batch, 1: dz}})
torch.testing.assert_close(ep.module()(x, y, z), M()(x, y, z))
print("exported program matches eager")
