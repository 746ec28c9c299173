"""Conformer block (speech: feed-forward halves, self-attention, depthwise convolution module)."""
import torch
from torch import nn

FAMILY, SOURCE = "speech", "self-contained"


class ConformerBlock(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        ff = lambda: nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim))  # noqa: E731
        self.ff1, self.ff2 = ff(), ff()
        self.norm_attn = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.norm_conv = nn.LayerNorm(dim)
        self.pw1, self.dw = nn.Conv1d(dim, 2 * dim, 1), nn.Conv1d(dim, dim, 15, padding=7, groups=dim)
        self.bn, self.pw2 = nn.BatchNorm1d(dim), nn.Conv1d(dim, dim, 1)
        self.norm_out = nn.LayerNorm(dim)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        h = self.norm_attn(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        c = nn.functional.glu(self.pw1(self.norm_conv(x).transpose(1, 2)), dim=1)
        x = x + self.pw2(nn.functional.silu(self.bn(self.dw(c)))).transpose(1, 2)
        return self.norm_out(x + 0.5 * self.ff2(x))


def build():
    return nn.Sequential(ConformerBlock(), ConformerBlock()), (torch.randn(2, 40, 64),)
