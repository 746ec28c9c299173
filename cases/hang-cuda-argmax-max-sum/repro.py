"""A chain of tiny reductions on CUDA: compiling it got stuck in Triton's scheduler.

Issue: https://github.com/pytorch/pytorch/issues/96662
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

if not torch.cuda.is_available():
    print("needs CUDA (Triton)")
    raise SystemExit(77)


def f(x):
    a = x.argmax(3)
    b = a.max(2).values
    return b + b.sum(0)


x = torch.rand(2, 1, 1, 1, device="cuda")
torch.testing.assert_close(torch.compile(f)(x), f(x))
print("compiled matches eager")
