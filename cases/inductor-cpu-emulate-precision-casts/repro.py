"""The documented mitigation for bf16 cast mismatches (emulate_precision_casts) on CPU inductor.

Issue: https://github.com/pytorch/pytorch/issues/159239 (TypeError: CppVecOverrides.to_dtype() ... 'use_compute_types').
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

import torch._inductor.config as inductor_config

if not hasattr(inductor_config, "emulate_precision_casts"):
    print("this torch has no inductor emulate_precision_casts")
    raise SystemExit(77)
inductor_config.emulate_precision_casts = True


def f(x, cos):
    y = (x.float() * cos).to(torch.bfloat16)
    return y.float() + 1


torch.manual_seed(0)
x = torch.randn(4, 64, device=device, dtype=torch.bfloat16)
cos = torch.randn(4, 64, device=device)
torch.testing.assert_close(torch.compile(f)(x, cos), f(x, cos))
print("compiled matches eager")
