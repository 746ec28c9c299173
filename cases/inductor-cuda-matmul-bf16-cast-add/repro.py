"""(a @ b).to(bfloat16) + c (float32) compiled on CUDA vs eager.

Issue: https://github.com/pytorch/pytorch/issues/181568 (max abs diff 0.03 on every element).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

if not torch.cuda.is_available():
    print("needs CUDA (the issue is about the Triton kernel)")
    raise SystemExit(77)


def f(a, b, c):
    return (a @ b).to(torch.bfloat16) + c


torch.manual_seed(0)
a, b = torch.randn(30, 40, device="cuda"), torch.randn(40, 17, device="cuda")
c = torch.randn(30, 17, device="cuda")
torch.testing.assert_close(torch.compile(f)(a, b, c), f(a, b, c))
print("compiled matches eager")
