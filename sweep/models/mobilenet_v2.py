"""MobileNetV2-style inverted residuals (depthwise separable convolutions, BatchNorm, ReLU6)."""
import torch
from torch import nn

FAMILY, SOURCE = "vision", "self-contained"


class InvertedResidual(nn.Module):
    def __init__(self, c, expand=4):
        super().__init__()
        h = c * expand
        self.block = nn.Sequential(nn.Conv2d(c, h, 1, bias=False), nn.BatchNorm2d(h), nn.ReLU6(),
                                   nn.Conv2d(h, h, 3, padding=1, groups=h, bias=False), nn.BatchNorm2d(h),
                                   nn.ReLU6(), nn.Conv2d(h, c, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        return x + self.block(x)


def build():
    model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU6(),
                          InvertedResidual(16), InvertedResidual(16), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(16, 10))
    return model, (torch.randn(4, 3, 32, 32),)
