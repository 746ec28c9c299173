"""Bidirectional GRU (nn.GRU, 2 layers) with a linear head."""
import torch
from torch import nn

FAMILY, SOURCE = "sequence", "self-contained"


class GRUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(32, 48, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(96, 8)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(out)


def build():
    return GRUNet(), (torch.randn(4, 12, 32),)
