"""Fix: keep the parameters in float32 and train under torch.autocast(float16), the usual mixed-precision recipe.

On GPUs weight_norm runs the fused aten._weight_norm_interface; with float32 parameters its weights and norms agree.
The compiled step's gradients are checked against eager's under the same autocast.
Run: REPRO_DEVICE=cuda python fixed.py
"""
import os

import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

device = os.environ.get("REPRO_DEVICE", "cuda")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float16"))
torch.manual_seed(0)

conv = weight_norm(nn.Conv1d(32, 32, 3, padding=1)).to(device=device)  # float32 parameters
x = torch.randn(4, 32, 64, device=device)


def grads(module):
    module.zero_grad(set_to_none=True)
    with torch.autocast(device_type=x.device.type, dtype=dtype):
        out = module(x)
    assert out.dtype == dtype, out.dtype  # the convolution did run in the low precision
    out.float().pow(2).mean().backward()
    return [p.grad.clone() for p in conv.parameters()]


expected = grads(conv)
actual = grads(torch.compile(conv))
for a, e in zip(actual, expected):
    torch.testing.assert_close(a, e, rtol=2e-2, atol=2e-2)
print("compiled weight_norm training step under float16 autocast matches eager")
