"""Fix: define the class outside the compiled function, so there is no graph break to allow.

A class statement inside the function is what breaks the graph (Dynamo cannot trace building a class); the
lenient region only decides what happens at that break, and the issue is that the whole frame then falls back to
eager. With Box defined at module level the function traces in one graph under fullgraph=True. The result is
checked against eager and the compile counter must show one graph holding the function's ops.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

from torch._dynamo.testing import CompileCounter


class Box:
    def __init__(self, v):
        self.v = v


def fn(x):
    y = x + 10
    return Box(x).v - y


counter = CompileCounter()
compiled = torch.compile(fn, backend=counter, fullgraph=True)
x = torch.tensor([1.0], device=device)
torch.testing.assert_close(compiled(x), fn(x))
print(f"{counter.frame_count} graph(s), {counter.op_count} op(s) compiled")
assert counter.frame_count == 1 and counter.op_count >= 2, "the function was not compiled as one graph"
