"""Fix: make dtype and layout explicit (out-of-place result in the target dtype, contiguous operands)."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")


def explicit(a_int, b, a_float, a_t, c):
    r1 = (a_int.to(torch.float32) + b * 0.5)  # promote on purpose instead of an impossible in-place cast
    r2 = (a_float.double() * b.double()).to(a_float.dtype)
    r3 = (a_t.t().contiguous() + c).t().contiguous()
    return r1, r2, r3


def make():
    return (torch.arange(16, device=device).reshape(4, 4), torch.ones(4, 4, device=device),
            torch.full((4, 4), 1.1, device=device), torch.arange(16.0, device=device).reshape(4, 4),
            torch.triu(torch.ones(4, 4, device=device)))


for got, want in zip(torch.compile(explicit, fullgraph=True)(*make()), explicit(*make())):
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want)
print("explicit dtype/layout: compiled matches eager")
