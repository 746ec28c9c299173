"""Stacked LSTM (nn.LSTM, 3 layers) with a linear head. Named by the article."""
import torch
from torch import nn

FAMILY, SOURCE = "sequence", "self-contained"


class StackedLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(32, 64, num_layers=3, batch_first=True)
        self.head = nn.Linear(64, 16)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out)


def build():
    return StackedLSTM(), (torch.randn(4, 12, 32),)
