"""Fixed upstream (the issue is closed): argmax and min over one dim in one compiled function, checked against eager.

The issue was that the C++ code inductor generated for an argmax and a min over the same dim did not compile. The
script compiles the function whole (fullgraph=True) and requires equal indices and values.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(x):
    return torch.argmax(x, 1), torch.min(x, 1).values


torch.manual_seed(0)
x = torch.randn(6, 19, device=device, dtype=dtype)
(idx, low), (want_idx, want_low) = torch.compile(f, fullgraph=True)(x), f(x)
assert torch.equal(idx, want_idx), (idx, want_idx)
torch.testing.assert_close(low, want_low)
print("compiled argmax and min match eager")
