"""Fix: compile the forward only and call backward outside the compiled function.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def forward(x):
    return x.sin().sin()


x = torch.ones(4, device=device, dtype=dtype, requires_grad=True)
forward(x).backward(torch.ones(4, device=device, dtype=dtype))
expected = x.grad.clone()
x.grad = None
torch.compile(forward, backend="aot_eager")(x).backward(torch.ones(4, device=device, dtype=dtype))
torch.testing.assert_close(x.grad, expected)
print("gradient matches eager")
