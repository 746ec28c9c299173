"""A weight-normalised Conv1d (torch.nn.utils.parametrizations.weight_norm) in float16: one compiled training step.

On GPUs weight_norm runs the fused aten._weight_norm_interface, whose norms are float32 while the weights are
float16. Eager trains; the compiled step's gradients are checked against eager's.
Run: REPRO_DEVICE=cuda python repro.py
"""
import os

import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

device = os.environ.get("REPRO_DEVICE", "cuda")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float16"))
torch.manual_seed(0)

conv = weight_norm(nn.Conv1d(32, 32, 3, padding=1)).to(device=device, dtype=dtype)
x = torch.randn(4, 32, 64, device=device, dtype=dtype)


def grads(module):
    module.zero_grad(set_to_none=True)
    module(x).float().pow(2).mean().backward()
    return [p.grad.clone() for p in conv.parameters()]


expected = grads(conv)
actual = grads(torch.compile(conv))
for a, e in zip(actual, expected):
    torch.testing.assert_close(a, e, rtol=2e-2, atol=2e-2)
print("compiled weight_norm training step matches eager")
