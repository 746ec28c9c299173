"""Fix: dynamic=False is a torch.compile argument; the two real inductor options stay in `options`."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 64)).to(device, dtype)
compiled = torch.compile(model, backend="inductor", dynamic=False,
                         options={"triton.cudagraphs": device == "cuda", "max_autotune": True})
x = torch.randn(16, 64, device=device, dtype=dtype)
with torch.no_grad():
    torch.testing.assert_close(compiled(x), model(x), atol=1e-3, rtol=1e-3)
print("corrected configuration compiles and matches eager")
