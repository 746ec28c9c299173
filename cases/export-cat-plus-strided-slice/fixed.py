"""Workaround from the issue: Dim.DYNAMIC instead of named dims.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

class M(torch.nn.Module):
    def forward(self, x, y, z):
        return torch.cat((x, y), dim=1) + z[:, ::2]


x, y, z = torch.randn(2, 3, device=device), torch.randn(2, 5, device=device), torch.randn(2, 16, device=device)
D = torch.export.Dim.DYNAMIC
ep = torch.export.export(M(), (x, y, z), dynamic_shapes={"x": {0: D, 1: D}, "y": {0: D, 1: D}, "z": {0: D, 1: D}})
torch.testing.assert_close(ep.module()(x, y, z), M()(x, y, z))
print("exported program matches eager")
