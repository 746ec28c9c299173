"""A float32 nn.Linear called with a float16 input on CPU: eager refuses the dtype mix; does the compiled module?

Issue: https://github.com/pytorch/pytorch/issues/141865
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

torch.manual_seed(0)
lin = torch.nn.Linear(1, 1).to(device).eval()
x = torch.randn(1, 1, device=device, dtype=torch.float16)
try:
    lin(x)
except RuntimeError as err:
    eager_error = err
else:
    print("eager accepts a float16 input here: nothing to compare")
    raise SystemExit(0)
try:
    out = torch.compile(lin)(x)
except Exception as err:  # the compiled module refuses too: consistent with eager
    print("compiled raises too:", type(err).__name__)
else:
    raise AssertionError(f"eager raised {eager_error!r}, the compiled module returned {out}")
