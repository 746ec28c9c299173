"""error_on_graph_break(True) wrapped around torch._dynamo.graph_break() after three traced ops.

Issue: https://github.com/pytorch/pytorch/issues/166589 (compilation succeeds, hiding the graph break).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

if not hasattr(torch._dynamo, "error_on_graph_break"):
    print("this torch has no torch._dynamo.error_on_graph_break")
    raise SystemExit(77)
from torch._dynamo.exc import Unsupported


@torch.compile(backend="eager")
def fn(x):
    x = x + 1
    x = x + 1
    x = x + 1
    with torch._dynamo.error_on_graph_break(True):
        torch._dynamo.graph_break()
    return x + 1


try:
    fn(torch.ones(3, device=device))
except Unsupported:
    print("the graph break raised Unsupported, as asked")
else:
    raise AssertionError("error_on_graph_break(True) let a graph break through")
