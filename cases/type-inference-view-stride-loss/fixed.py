"""Fix: use reshape (copies when a view is impossible) or .contiguous() before view; compare values with eager."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def flatten_transposed(x):
    return x.transpose(0, 1).contiguous().view(-1), x.transpose(0, 1).reshape(-1)


compiled = torch.compile(flatten_transposed, dynamic=True, fullgraph=True)
for n in (4, 6, 10):
    x = torch.randn(n, 8, device=device, dtype=dtype)
    for got, want in zip(compiled(x), flatten_transposed(x)):
        torch.testing.assert_close(got, want)
        assert got.is_contiguous() and want.is_contiguous()
print("contiguous()/reshape before view: compiled matches eager")
