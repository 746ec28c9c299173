"""x.item() captured as an unbacked float (capture_scalar_outputs) and used inside a kernel, on CPU.

Issue: https://github.com/pytorch/pytorch/issues/158060
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

torch._dynamo.config.capture_scalar_outputs = True


def f(x):
    s = x.sum().item()
    return torch.full((4,), s, device=x.device, dtype=torch.float64) + 1


x = torch.randn(8, device=device, dtype=dtype)
torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), f(x))
print("compiled matches eager")
