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
    ref64 = torch.relu(x.double() @ w1.double().t()) @ w2.double().t()
    err_eager = (mlp(x, w1, w2).double() - ref64).abs().max().item()
    err_compiled = (compiled(x, w1, w2).double() - ref64).abs().max().item()
print(f"max abs error vs float64: eager FP8 {err_eager:.4f}, compiled FP8 {err_compiled:.4f}")
assert err_compiled <= 1.5 * err_eager + 1e-3, f"compiled FP8 error {err_compiled:.4f} > 1.5 x eager {err_eager:.4f}"
print("FP8 compiled inference is as accurate as eager FP8")
