"""Fix: build constants outside the autocast region (or register them as float32 buffers), then export."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
low = getattr(torch, os.environ.get("REPRO_DTYPE", "bfloat16"))
device_type = device.split(":")[0]


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.register_buffer("scale", torch.full((16,), 1.0 / 3.0))
        self.register_buffer("eps", torch.tensor(1e-6))

    def forward(self, x):
        with torch.autocast(device_type, dtype=low):
            y = self.lin(x)
        return y.float() * self.scale + self.eps


torch.manual_seed(0)
model = Scaled().to(device).eval()
x = torch.randn(4, 16, device=device)
exported = torch.export.export(model, (x,))
assert all(b.dtype == torch.float32 for b in exported.module().buffers())
torch.testing.assert_close(exported.module()(x), model(x))
print("float32 buffers survive export; outputs match eager")
