"""A float32 constant built inside autocast: its dtype after torch.export / torch.jit.trace, and outputs vs eager.

Run: REPRO_DTYPE=bfloat16 python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
low = getattr(torch, os.environ.get("REPRO_DTYPE", "bfloat16"))
device_type = device.split(":")[0]


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        with torch.autocast(device_type, dtype=low):
            y = self.lin(x)
            eps = torch.tensor(1e-6, device=x.device)  # a float32 constant inside the autocast region
            scale = torch.full((16,), 1.0 / 3.0, device=x.device)
        return y.float() * scale + eps, scale, eps  # the constants are returned to inspect their dtype


torch.manual_seed(0)
model = Scaled().to(device).eval()
x = torch.randn(4, 16, device=device)
want, scale, eps = model(x)
assert (scale.dtype, eps.dtype) == (torch.float32, torch.float32), "eager: constants are float32"

exported = torch.export.export(model, (x,))
got = exported.module()(x)
assert got[1].dtype == got[2].dtype == torch.float32, f"torch.export: constant dtypes {got[1].dtype}, {got[2].dtype}"
torch.testing.assert_close(got[0], want)

traced = torch.jit.trace(model, (x,), check_trace=False)
out, scale, eps = traced(x)
assert scale.dtype == eps.dtype == torch.float32, f"TorchScript: constant dtypes {scale.dtype}, {eps.dtype}"
torch.testing.assert_close(out, want)
print("constants stay float32 through torch.export and torch.jit.trace; outputs match eager")
