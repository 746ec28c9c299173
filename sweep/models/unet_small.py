"""Small diffusion U-Net (ResNet blocks with GroupNorm, down/up sampling, skip connections, mid attention)."""
import torch
from torch import nn
from torch.nn import functional as F

FAMILY, SOURCE = "diffusion", "self-contained"


class ResBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(4, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.n2, self.c2 = nn.GroupNorm(4, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        return self.skip(x) + self.c2(F.silu(self.n2(self.c1(F.silu(self.n1(x))))))


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Conv2d(3, 16, 3, padding=1)
        self.d1, self.d2 = ResBlock(16, 16), ResBlock(16, 32)
        self.mid_attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.u2, self.u1 = ResBlock(64, 16), ResBlock(32, 16)
        self.out = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, x):
        h1 = self.d1(self.inp(x))
        h2 = self.d2(F.avg_pool2d(h1, 2))
        b, c, hh, ww = h2.shape
        seq = h2.flatten(2).transpose(1, 2)
        seq = seq + self.mid_attn(seq, seq, seq, need_weights=False)[0]
        m = seq.transpose(1, 2).reshape(b, c, hh, ww)
        u = self.u2(torch.cat([m, h2], 1))
        u = self.u1(torch.cat([F.interpolate(u, scale_factor=2.0, mode="nearest"), h1], 1))
        return self.out(u)


def build():
    return UNet(), (torch.randn(2, 3, 16, 16),)
