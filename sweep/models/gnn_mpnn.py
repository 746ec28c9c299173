"""Message-passing GNN (edge MLP messages, index_add_ aggregation, GRU-style node update) on a random graph."""
import torch
from torch import nn

FAMILY, SOURCE = "graph", "self-contained"


class MPNN(nn.Module):
    def __init__(self, dim=32, steps=3):
        super().__init__()
        self.steps = steps
        self.message = nn.Sequential(nn.Linear(2 * dim + 4, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.update = nn.GRUCell(dim, dim)
        self.readout = nn.Linear(dim, 1)

    def forward(self, x, edge_index, edge_attr):
        src, dst = edge_index
        for _ in range(self.steps):
            msg = self.message(torch.cat([x[src], x[dst], edge_attr], dim=-1))
            agg = torch.zeros_like(x).index_add_(0, dst, msg)
            x = self.update(agg, x)
        return self.readout(x).sum(0)


def build():
    g = torch.Generator().manual_seed(0)
    edge_index = torch.randint(0, 40, (2, 160), generator=g)
    return MPNN(), (torch.randn(40, 32), edge_index, torch.randn(160, 4))
