"""DeepFM recommender: field embeddings, factorization-machine second-order term and a deep MLP."""
import torch
from torch import nn

FAMILY, SOURCE = "recommendation", "self-contained"


class DeepFM(nn.Module):
    def __init__(self, fields=8, rows=500, dim=16):
        super().__init__()
        self.emb = nn.Embedding(fields * rows, dim)
        self.lin = nn.Embedding(fields * rows, 1)
        self.offsets = nn.Buffer(torch.arange(fields) * rows)
        self.mlp = nn.Sequential(nn.Linear(fields * dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, ids):
        ids = ids + self.offsets
        e = self.emb(ids)
        fm = 0.5 * (e.sum(1).pow(2) - e.pow(2).sum(1)).sum(1, keepdim=True)
        return self.lin(ids).sum(1) + fm + self.mlp(e.flatten(1))


def build():
    return DeepFM(), (torch.randint(0, 500, (16, 8)),)
