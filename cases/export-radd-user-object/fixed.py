"""Fix: export with strict=False (non-strict mode, the default of torch.export.export in recent releases).

Strict export traces with Dynamo, which cannot turn the user-defined object into a graph value when it resolves
tensor + obj. Non-strict export runs the module's Python code as is, with fake tensors: Python dispatches
tensor + obj to Offset.__radd__, which adds a tensor, and only that tensor op is traced. The exported program is
checked against eager.
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
ep = torch.export.export(M(), (x,), strict=False)
torch.testing.assert_close(ep.module()(x), M()(x))
print("non-strict exported program matches eager")
