"""Strict export of a loop over a tensor's elements building torch.full((h*w, 1), s); non-strict works.

Issue: https://github.com/pytorch/pytorch/issues/144907 (from a YOLO pose model).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

class Strides(torch.nn.Module):
    def forward(self, h, w, strides):
        return torch.cat([torch.full((h * w, 1), s) for s in strides])


args = (80, 80, torch.tensor([8.0, 16.0, 32.0]))
ep = torch.export.export(Strides(), args, strict=True)
torch.testing.assert_close(ep.module()(*args), Strides()(*args))
print("strict export matches eager")
