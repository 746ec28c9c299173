"""Temporal convolutional network (causal dilated Conv1d blocks with weight norm and residuals)."""
import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

FAMILY, SOURCE = "sequence", "self-contained"


class TemporalBlock(nn.Module):
    def __init__(self, c, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.conv = weight_norm(nn.Conv1d(c, c, 3, dilation=dilation))

    def forward(self, x):
        return x + torch.relu(self.conv(nn.functional.pad(x, (self.pad, 0))))


def build():
    model = nn.Sequential(nn.Conv1d(8, 32, 1), *[TemporalBlock(32, d) for d in (1, 2, 4)], nn.Conv1d(32, 4, 1))
    return model, (torch.randn(4, 8, 64),)
