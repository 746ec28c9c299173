"""Fix from the issue thread: export with strict=False.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

class Strides(torch.nn.Module):
    def forward(self, h, w, strides):
        return torch.cat([torch.full((h * w, 1), s) for s in strides])


args = (80, 80, torch.tensor([8.0, 16.0, 32.0]))
ep = torch.export.export(Strides(), args, strict=False)
torch.testing.assert_close(ep.module()(*args), Strides()(*args))
print("non-strict export matches eager")
