"""Fixed upstream (the issue is closed): replicate pad returned both as an output and as pad + pad, checked against
eager.

When an intermediate is also a graph output, inductor must materialize it as well as fuse it into the add; the
issue was a wrong result in that case on CPU. The script checks both outputs against eager, and that the returned
pad really is the replicate padding (its new rows and columns copy the border of |x|).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(x):
    pad = torch.nn.functional.pad(torch.abs(x), (0, 24, 34, 0), mode="replicate")
    return torch.add(pad, pad), pad


torch.manual_seed(0)
x = torch.randn(1, 3, 41, 51, device=device, dtype=dtype)
(doubled, pad), (want_doubled, want_pad) = torch.compile(f, fullgraph=True)(x), f(x)
torch.testing.assert_close(pad, want_pad)
torch.testing.assert_close(doubled, want_doubled)
torch.testing.assert_close(pad[..., :34, :51], x.abs()[..., :1, :].expand(-1, -1, 34, -1))  # top rows: first row
torch.testing.assert_close(pad[..., 34:, 51:], x.abs()[..., :, -1:].expand(-1, -1, -1, 24))  # right: last column
print("compiled pad and pad + pad match eager")
