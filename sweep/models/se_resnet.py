"""Squeeze-and-excitation ResNet blocks (channel gating from global pooling), EfficientNet-style SiLU."""
import torch
from torch import nn

FAMILY, SOURCE = "vision", "self-contained"


class SEBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.SiLU(),
                                  nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c // 4, 1), nn.SiLU(), nn.Conv2d(c // 4, c, 1),
                                nn.Sigmoid())

    def forward(self, x):
        h = self.body(x)
        return nn.functional.silu(x + h * self.se(h))


def build():
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), SEBlock(32), SEBlock(32), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(32, 10))
    return model, (torch.randn(4, 3, 32, 32),)
