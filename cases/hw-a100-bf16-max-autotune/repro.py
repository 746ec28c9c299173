"""A bfloat16 transformer MLP block compiled with mode="max-autotune", checked against eager.

Run: REPRO_DEVICE=cuda REPRO_DTYPE=bfloat16 python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cuda")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "bfloat16"))


class MLPBlock(torch.nn.Module):
    def __init__(self, dim=1024, hidden=4096):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.up = torch.nn.Linear(dim, hidden)
        self.down = torch.nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


torch.manual_seed(0)
model = MLPBlock().to(device=device, dtype=dtype)
x = torch.randn(8, 256, 1024, device=device, dtype=dtype)
compiled = torch.compile(model, mode="max-autotune")
with torch.no_grad():
    torch.testing.assert_close(compiled(x), model(x), atol=5e-2, rtol=5e-2)
print("max-autotune bfloat16 result matches eager")
