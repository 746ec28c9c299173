"""GLU-MLP (SwiGLU feed-forward blocks with residuals). Named by the article."""
import torch
from torch import nn

FAMILY, SOURCE = "mlp", "self-contained"


class GLUBlock(nn.Module):
    def __init__(self, dim=64, hidden=172):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.gate, self.up, self.down = nn.Linear(dim, hidden), nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x):
        h = self.norm(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


def build():
    return nn.Sequential(*[GLUBlock() for _ in range(3)]), (torch.randn(4, 16, 64),)
