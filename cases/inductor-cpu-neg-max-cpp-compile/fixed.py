"""Fixed upstream (the issue is closed): max(-x, dim) compiled on CPU, values and indices checked against eager.

The issue was a C++ compile error in the kernel inductor generated for the negation and the max-with-index
reduction. The script compiles the function whole (fullgraph=True) and requires equal indices and values.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(x):
    v, i = torch.max(torch.neg(x), dim=1)
    return v, i


torch.manual_seed(0)
x = torch.randn(8, 17, device=device, dtype=dtype)
(v, i), (want_v, want_i) = torch.compile(f, fullgraph=True)(x), f(x)
torch.testing.assert_close(v, want_v)
assert torch.equal(i, want_i), (i, want_i)
print("compiled max(-x) values and indices match eager")
