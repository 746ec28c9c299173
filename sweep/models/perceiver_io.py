"""Perceiver IO (latent array cross-attends to inputs, latent self-attention, query decoder). Named by the article."""
import torch
from torch import nn

FAMILY, SOURCE = "multimodal", "self-contained"


class PerceiverIO(nn.Module):
    def __init__(self, in_dim=32, dim=64, latents=16, queries=8, out_dim=10):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, dim) * 0.02)
        self.queries = nn.Parameter(torch.randn(queries, dim) * 0.02)
        self.inp = nn.Linear(in_dim, dim)
        self.encode = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.process = nn.TransformerEncoderLayer(dim, 4, 128, dropout=0.0, batch_first=True)
        self.decode = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.out = nn.Linear(dim, out_dim)

    def forward(self, x):
        kv = self.inp(x)
        lat = self.latents.expand(x.shape[0], -1, -1)
        lat = lat + self.encode(lat, kv, kv, need_weights=False)[0]
        lat = self.process(lat)
        q = self.queries.expand(x.shape[0], -1, -1)
        return self.out(self.decode(q, lat, lat, need_weights=False)[0])


def build():
    return PerceiverIO(), (torch.randn(2, 50, 32),)
