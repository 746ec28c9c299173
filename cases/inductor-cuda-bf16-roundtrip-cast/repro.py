"""A round-trip cast through bfloat16, compiled on CUDA, compared bitwise with eager.

Issue: https://github.com/pytorch/pytorch/issues/176565
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

if not torch.cuda.is_available():
    print("needs CUDA (the issue is about the Triton kernel)")
    raise SystemExit(77)


def roundtrip(x):
    return x.to(torch.bfloat16).to(torch.float32)


torch.manual_seed(1234)
x = torch.randn(4, 4, device="cuda")
got, want = torch.compile(roundtrip)(x), roundtrip(x)
assert torch.equal(got, want), f"compiled {got} vs eager {want}"
print("compiled round trip is bitwise equal to eager")
