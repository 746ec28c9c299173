"""Fixed upstream (the issue is closed): emulate_precision_casts=True on CPU inductor, checked bitwise against eager.

The option makes inductor round every intermediate that eager rounds (here the float32 product cast to bfloat16)
instead of keeping it in float32; the issue was that the CPU vectorized backend raised a TypeError
(CppVecOverrides.to_dtype() and use_compute_types) when it was on. Without the option this kernel differs from
eager by about one bfloat16 step; with it the compiled result must be bitwise equal to eager.
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
got, want = torch.compile(f)(x, cos), f(x, cos)
assert torch.equal(got, want), f"max abs diff {(got - want).abs().max().item()}"
print("compiled with emulate_precision_casts is bitwise equal to eager")
