"""Workaround: rotate in float32 and cast back once (as many LLM implementations do), against eager.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rope(q, k, cos, sin):
    cos, sin = cos.unsqueeze(1).float(), sin.unsqueeze(1).float()
    qf, kf = q.float(), k.float()
    return (qf * cos + rotate_half(qf) * sin).to(q.dtype), (kf * cos + rotate_half(kf) * sin).to(k.dtype)


torch.manual_seed(0)
bf = torch.bfloat16
q = torch.randn(1, 2, 7, 16, device=device, dtype=bf)
k = torch.randn(1, 1, 7, 16, device=device, dtype=bf)
cos, sin = torch.randn(1, 7, 16, device=device, dtype=bf), torch.randn(1, 7, 16, device=device, dtype=bf)
compiled = torch.compile(rope, fullgraph=True, dynamic=True)(q, k, cos, sin)
for got, want in zip(compiled, rope(q, k, cos, sin)):
    torch.testing.assert_close(got, want)
print("compiled float32-rotation RoPE matches eager")
