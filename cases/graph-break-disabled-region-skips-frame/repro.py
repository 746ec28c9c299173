"""Code before a class definition (a graph break) inside a region that allows graph breaks: is it compiled?

Issue: https://github.com/pytorch/pytorch/issues/161562 (the frame is skipped instead of split).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

from torch._dynamo.testing import CompileCounter

counter = CompileCounter()
if hasattr(torch._dynamo, "set_fullgraph"):  # the API the issue used (later renamed)
    strict, lenient = {"fullgraph": True}, torch._dynamo.set_fullgraph(False)
elif hasattr(torch._dynamo, "error_on_graph_break"):
    strict, lenient = {}, torch._dynamo.error_on_graph_break(False)
else:
    print("this torch has neither torch._dynamo.set_fullgraph nor error_on_graph_break")
    raise SystemExit(77)


def fn(x):
    y = x + 10
    with lenient:
        class Box:
            def __init__(self, v):
                self.v = v
    return Box(x).v - y


compiled = torch.compile(fn, backend=counter, **strict)
if not strict:
    compiled = torch._dynamo.error_on_graph_break(True)(compiled)
x = torch.tensor([1.0], device=device)
torch.testing.assert_close(compiled(x), fn(x))
print(f"{counter.frame_count} graph(s), {counter.op_count} op(s) compiled")
assert counter.op_count > 0, "the frame fell back to eager: nothing was compiled around the allowed graph break"
