"""The same FP8 MLP with the scaling done outside the autograd.Function (scales as plain tensor ops), compiled.

If the repro already passes, this is the reference formulation; both are reported.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cuda")
fp8 = getattr(torch, os.environ.get("REPRO_DTYPE", "float8_e4m3fn"))
E4M3_MAX = torch.finfo(fp8).max


def fp8_linear(x, w):
    xs = x.abs().amax().clamp(min=1e-12).float() / E4M3_MAX
    ws = w.abs().amax().clamp(min=1e-12).float() / E4M3_MAX
    xq = (x.float() / xs).clamp(-E4M3_MAX, E4M3_MAX).to(fp8)
    wq = (w.float() / ws).clamp(-E4M3_MAX, E4M3_MAX).to(fp8)
    return torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=torch.bfloat16)


def mlp(x, w1, w2):
    return fp8_linear(torch.relu(fp8_linear(x, w1)), w2)


torch.manual_seed(0)
x = torch.randn(256, 512, device=device, dtype=torch.bfloat16)
w1 = torch.randn(1024, 512, device=device, dtype=torch.bfloat16) * 0.05
w2 = torch.randn(512, 1024, device=device, dtype=torch.bfloat16) * 0.05
compiled = torch.compile(mlp, fullgraph=True)
with torch.no_grad():
    ref = torch.relu(x @ w1.t()) @ w2.t()
    torch.testing.assert_close(compiled(x, w1, w2), ref, atol=0.15, rtol=0.15)
print("FP8 compiled inference matches bf16")
