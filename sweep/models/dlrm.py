"""DLRM-style recommender: sparse features through EmbeddingBag, dense MLP, pairwise dot interaction."""
import torch
from torch import nn

FAMILY, SOURCE = "recommendation", "self-contained"


class DLRM(nn.Module):
    def __init__(self, tables=4, rows=1000, dim=16):
        super().__init__()
        self.emb = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(tables))
        self.bottom = nn.Sequential(nn.Linear(13, 32), nn.ReLU(), nn.Linear(32, dim), nn.ReLU())
        n = tables + 1
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, dense, indices, offsets):
        feats = [self.bottom(dense)] + [e(indices[i], offsets) for i, e in enumerate(self.emb)]
        z = torch.stack(feats, dim=1)
        inter = z @ z.transpose(1, 2)
        i, j = torch.triu_indices(z.shape[1], z.shape[1], offset=1)
        return self.top(torch.cat([feats[0], inter[:, i, j]], dim=1))


def build():
    batch, per_bag = 8, 3
    indices = torch.randint(0, 1000, (4, batch * per_bag))
    offsets = torch.arange(0, batch * per_bag, per_bag)
    return DLRM(), (torch.randn(batch, 13), indices, offsets)
