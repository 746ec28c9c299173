"""softmax(...).to(float16) @ v (float32): eager raises a dtype error; compiled?

Issue: https://github.com/pytorch/pytorch/issues/150993
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def attend(q, k, v):
    w = torch.softmax((q @ k.transpose(-2, -1)).float(), dim=-1).to(torch.float16)
    return w @ v


torch.manual_seed(0)
q, k, v = (torch.randn(1, 4, 16, 16, device=device) for _ in range(3))
try:
    attend(q, k, v)
except RuntimeError as err:
    eager_error = err
else:
    print("eager accepts the mix here: nothing to compare")
    raise SystemExit(0)
try:
    out = torch.compile(attend)(q, k, v)
except Exception as err:
    print("compiled raises too:", type(err).__name__)
else:
    raise AssertionError(f"eager raised {eager_error!r}; compiled returned a {out.dtype} result")
