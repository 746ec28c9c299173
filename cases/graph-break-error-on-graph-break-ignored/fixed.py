"""Fix: torch.compile(fullgraph=True), the stable way to make any graph break an error.

fullgraph=True applies to the whole frame, so the explicit torch._dynamo.graph_break() after the three traced
ops raises Unsupported instead of splitting the graph (the issue, now closed, was that the scoped
error_on_graph_break(True) region let it through). The script exits 0 only when the break raises.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

from torch._dynamo.exc import Unsupported


@torch.compile(backend="eager", fullgraph=True)
def fn(x):
    x = x + 1
    x = x + 1
    x = x + 1
    torch._dynamo.graph_break()
    return x + 1


try:
    fn(torch.ones(3, device=device))
except Unsupported:
    print("the graph break raised Unsupported under fullgraph=True")
else:
    raise AssertionError("fullgraph=True let a graph break through")
