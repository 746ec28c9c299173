"""The article's RTX 4090 example, verbatim (on any device; REPRO_DEVICE=cuda for the GPU it names).

Run: python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 64)).to(device, dtype)

compiled = torch.compile(
    model,
    backend="inductor",
    options={
        "triton.cudagraphs": True,
        "max_autotune": True,  # enable kernel autotuning
        "dynamic_shapes": False,  # static shapes for throughput
    },
)
x = torch.randn(16, 64, device=device, dtype=dtype)
with torch.no_grad():
    torch.testing.assert_close(compiled(x), model(x), atol=1e-3, rtol=1e-3)
print("the article's RTX 4090 configuration compiles and matches eager")
