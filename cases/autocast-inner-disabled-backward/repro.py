"""Outer autocast(bfloat16), inner autocast(enabled=False) float32 matmul compiled with aot_eager; the weight
gradient against eager (bitwise, as the issue expects).

Issue: https://github.com/pytorch/pytorch/issues/179804 (reported on CUDA; this runs on REPRO_DEVICE).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

torch.manual_seed(0)
lin = torch.nn.Linear(64, 64, device=device)
h = torch.randn(4, 64, device=device, dtype=torch.bfloat16, requires_grad=True)
kind = torch.device(device).type


def inner(x):
    with torch.autocast(kind, enabled=False):
        return x.float() @ lin.weight.float().T


def grad_of(fn):
    lin.weight.grad = None
    with torch.autocast(kind, dtype=torch.bfloat16):
        out = fn(h)
    out.sum().backward()
    return lin.weight.grad.clone()


eager, compiled = grad_of(inner), grad_of(torch.compile(inner, backend="aot_eager"))
assert torch.equal(eager, compiled), f"weight gradients differ: max abs diff {(eager - compiled).abs().max().item()}"
print("compiled weight gradient equals eager")
