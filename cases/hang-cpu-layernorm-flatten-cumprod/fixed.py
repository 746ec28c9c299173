"""Fix: split the compiled region with a graph break between flatten and cumprod (torch._dynamo.graph_break()).

The issue reports that LayerNorm -> flatten -> cumprod hangs when inductor compiles it as one graph, while each part
compiles on its own. The break gives two graphs, LayerNorm + flatten and cumprod, each compiled separately. The
result is checked against eager (cumprod of 4096 values underflows to 0 and may overflow to inf, hence equal_nan).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

from torch._dynamo.testing import CompileCounterWithBackend

torch.manual_seed(0)
norm = torch.nn.LayerNorm([8]).to(device)


def f(x):
    flat = torch.flatten(norm(x), 0)
    torch._dynamo.graph_break()
    return torch.cumprod(flat, 0)


x = torch.randn(8, 8, 8, 8, device=device, dtype=dtype)
counter = CompileCounterWithBackend("inductor")
with torch.no_grad():
    torch.testing.assert_close(torch.compile(f, backend=counter)(x), f(x), equal_nan=True)
assert counter.frame_count == 2, f"{counter.frame_count} graph(s) compiled"
print("compiled with inductor in two graphs, matches eager")
