"""Down- and up-sampling with F.interpolate, exported with one Dim shared by both spatial dims of x and y.

Issue: https://github.com/pytorch/pytorch/issues/131897
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

class M(torch.nn.Module):
    def forward(self, x, y):
        x = torch.nn.functional.interpolate(x, scale_factor=0.5, mode="bilinear")
        x = torch.nn.functional.interpolate(x, scale_factor=2.0, mode="bilinear")
        return x + y


x, y = torch.rand(1, 1, 32, 32, device=device), torch.rand(1, 1, 32, 32, device=device)
d = torch.export.Dim("d", min=16, max=64)
ep = torch.export.export(M(), (x, y), dynamic_shapes={"x": {2: d, 3: d}, "y": {2: d, 3: d}})
x2, y2 = torch.rand(1, 1, 48, 48, device=device), torch.rand(1, 1, 48, 48, device=device)
torch.testing.assert_close(ep.module()(x2, y2), M()(x2, y2))
print("exported program matches eager")
