"""Slice assignment into a buffer, exported with Dim(min=1, max=10) and an example of size 10; then called
with size 5.

Issue: https://github.com/pytorch/pytorch/issues/146046
"""
import os

import torch

torch.manual_seed(0)  # the same data every run: the verdict never depends on the draw

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

class Cache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(10))

    def forward(self, x):
        self.cache[0: x.shape[0]] = x
        return x * 2


dim = torch.export.Dim("n", min=1, max=10)
ep = torch.export.export(Cache(), (torch.randn(10, device=device),), dynamic_shapes={"x": {0: dim}})
try:
    out = ep.module()(torch.ones(5, device=device))
except Exception as err:
    raise AssertionError(f"exported with a dynamic dim, but size 5 is refused: {err}") from None
torch.testing.assert_close(out, torch.full((5,), 2.0, device=device))
print("the exported program accepts size 5")
