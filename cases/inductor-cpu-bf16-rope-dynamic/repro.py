"""bfloat16 rotary embedding compiled with dynamic shapes on CPU, against eager (bfloat16 tolerances).

Issue: https://github.com/pytorch/pytorch/issues/182225 (float32 matches, bfloat16 does not).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rope(q, k, cos, sin):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


torch.manual_seed(0)
bf = torch.bfloat16
q = torch.randn(1, 2, 7, 16, device=device, dtype=bf)
k = torch.randn(1, 1, 7, 16, device=device, dtype=bf)
cos, sin = torch.randn(1, 7, 16, device=device, dtype=bf), torch.randn(1, 7, 16, device=device, dtype=bf)
compiled = torch.compile(rope, fullgraph=True, dynamic=True)(q, k, cos, sin)
for name, got, want in zip("qk", compiled, rope(q, k, cos, sin)):
    torch.testing.assert_close(got, want, msg=lambda m, n=name: f"{n}: {m}")
print("compiled bfloat16 RoPE matches eager")
