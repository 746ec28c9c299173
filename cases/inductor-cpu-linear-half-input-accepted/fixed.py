"""Fix: cast the input to the weight's dtype; compiled result checked against eager.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

torch.manual_seed(0)
lin = torch.nn.Linear(1, 1).to(device).eval()
x = torch.randn(1, 1, device=device, dtype=torch.float16).to(lin.weight.dtype)
torch.testing.assert_close(torch.compile(lin)(x), lin(x))
print("compiled matches eager")
