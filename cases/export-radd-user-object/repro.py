"""A tensor plus a user-defined object that implements __radd__, exported with torch.export.export.

Issue: https://github.com/pytorch/pytorch/issues/136757
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

class Offset:
    def __init__(self, t):
        self.t = t

    def __radd__(self, other):
        return other + self.t


class M(torch.nn.Module):
    def forward(self, x):
        return x + Offset(torch.ones_like(x))


x = torch.tensor([2.0, 3.0], device=device, dtype=dtype)
ep = torch.export.export(M(), (x,), strict=True)
torch.testing.assert_close(ep.module()(x), M()(x))
print("exported program matches eager")
