"""Workaround: turn off the MultiheadAttention / TransformerEncoderLayer fast path; the layer runs composite ops.

The encoder layer takes its fused inference fast path (aten._transformer_encoder_layer_fwd). Checked against eager.
Run: python repro.py
"""
import os

import torch
from torch import nn

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
torch.manual_seed(0)
torch.backends.mha.set_fastpath_enabled(False)


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(16, 64) * 0.02)
        self.attn = nn.MultiheadAttention(64, 4, batch_first=True)
        self.process = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)

    def forward(self, kv):
        lat = self.latents.expand(kv.shape[0], -1, -1)
        lat = lat + self.attn(lat, kv, kv, need_weights=False)[0]
        return self.process(lat)


m = M().to(device=device, dtype=dtype).eval()
kv = torch.randn(2, 50, 64, device=device, dtype=dtype)
with torch.no_grad():
    torch.testing.assert_close(torch.compile(m)(kv), m(kv))
print("compiled encoder without the fast path matches eager")
