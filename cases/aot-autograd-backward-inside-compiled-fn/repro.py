"""A compiled function (aot_eager) that calls torch.autograd.backward itself; the gradient against eager.

Issue: https://github.com/pytorch/pytorch/issues/125287
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def step(x):
    y = x.sin().sin()
    torch.autograd.backward([y], [torch.ones_like(y)])


x = torch.ones(4, device=device, dtype=dtype, requires_grad=True)
step(x)
expected = x.grad.clone()
x.grad = None
torch.compile(step, backend="aot_eager")(x)
torch.testing.assert_close(x.grad, expected)
print("gradient matches eager")
