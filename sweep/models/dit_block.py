"""DiT blocks (diffusion transformer: adaLN-Zero modulation from timestep + class embedding)."""
import torch
from torch import nn

FAMILY, SOURCE = "diffusion", "self-contained"


class DiTBlock(nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, elementwise_affine=False)
        self.norm2 = nn.LayerNorm(dim, elementwise_affine=False)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim))
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(dim, 6 * dim))

    def forward(self, x, c):
        s1, g1, a1, s2, g2, a2 = self.ada(c).unsqueeze(1).chunk(6, dim=-1)
        h = self.norm1(x) * (1 + g1) + s1
        x = x + a1 * self.attn(h, h, h, need_weights=False)[0]
        return x + a2 * self.mlp(self.norm2(x) * (1 + g2) + s2)


class DiT(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.patch = nn.Conv2d(4, dim, 2, stride=2)
        self.t_emb = nn.Sequential(nn.Linear(1, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.y_emb = nn.Embedding(10, dim)
        self.blocks = nn.ModuleList(DiTBlock(dim) for _ in range(2))
        self.out = nn.Linear(dim, 16)

    def forward(self, x, t, y):
        h = self.patch(x).flatten(2).transpose(1, 2)
        c = self.t_emb(t[:, None]) + self.y_emb(y)
        for block in self.blocks:
            h = block(h, c)
        return self.out(h)


def build():
    return DiT(), (torch.randn(2, 4, 16, 16), torch.rand(2), torch.randint(0, 10, (2,)))
