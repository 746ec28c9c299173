"""x.item() captured as an unbacked float (capture_scalar_outputs) and used inside a kernel, on CPU.

Issue: https://github.com/pytorch/pytorch/issues/158060
Compared with eager at the tolerance of float32, the dtype the sum is computed in: the compiled sum adds in another
order (measured on an Intel Xeon: 6e-7 relative, beyond float64's default tolerance).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

torch._dynamo.config.capture_scalar_outputs = True


def f(x):
    s = x.sum().item()
    return torch.full((4,), s, device=x.device, dtype=torch.float64) + 1


torch.manual_seed(0)
x = torch.randn(8, device=device, dtype=dtype)
tolerance = {"rtol": 1.3e-6, "atol": 1e-5} if dtype == torch.float32 else {}  # float32's defaults
torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), f(x), **tolerance)
print("compiled matches eager")
