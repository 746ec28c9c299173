"""Mitigation from the issue: inductor's emulate_precision_casts keeps the bfloat16 rounding.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

if not torch.cuda.is_available():
    print("needs CUDA")
    raise SystemExit(77)
import torch._inductor.config as inductor_config

inductor_config.emulate_precision_casts = True


def f(a, b, c):
    return (a @ b).to(torch.bfloat16) + c


torch.manual_seed(0)
a, b = torch.randn(30, 40, device="cuda"), torch.randn(40, 17, device="cuda")
c = torch.randn(30, 17, device="cuda")
torch.testing.assert_close(torch.compile(f)(a, b, c), f(a, b, c))
print("compiled matches eager")
