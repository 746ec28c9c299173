"""FP8 linear (torch._scaled_mm, e4m3, dynamic per-tensor scales) compiled, forward + a training step.

Run: REPRO_DEVICE=cuda REPRO_DTYPE=float8_e4m3fn python repro.py   (needs compute capability >= 8.9)
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cuda")
fp8 = getattr(torch, os.environ.get("REPRO_DTYPE", "float8_e4m3fn"))
E4M3_MAX = torch.finfo(fp8).max


def to_fp8(t):
    scale = E4M3_MAX / t.abs().amax().clamp(min=1e-12).float()
    return (t.float() * scale).clamp(-E4M3_MAX, E4M3_MAX).to(fp8), scale.reciprocal()


class FP8Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        xq, xs = to_fp8(x)
        wq, ws = to_fp8(w)
        return torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=torch.bfloat16)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w, grad.t() @ x  # bfloat16 backward, as in common FP8 recipes' first step


def mlp(x, w1, w2):
    return FP8Linear.apply(torch.relu(FP8Linear.apply(x, w1)), w2)


def mlp_bf16(x, w1, w2):
    return torch.relu(x @ w1.t()) @ w2.t()


torch.manual_seed(0)
x = torch.randn(256, 512, device=device, dtype=torch.bfloat16)
w1 = (torch.randn(1024, 512, device=device, dtype=torch.bfloat16) * 0.05).requires_grad_()
w2 = (torch.randn(512, 1024, device=device, dtype=torch.bfloat16) * 0.05).requires_grad_()
compiled = torch.compile(mlp, fullgraph=True)
with torch.no_grad():
    # Accuracy as PyTorch's dashboard checks it: against a float64 reference, the compiled error may not exceed
    # eager's (same FP8 recipe, uncompiled) by more than a small factor.
    ref64 = mlp_bf16(x.double(), w1.double(), w2.double())
    err_eager = (mlp(x, w1, w2).double() - ref64).abs().max().item()
    err_compiled = (compiled(x, w1, w2).double() - ref64).abs().max().item()
print(f"max abs error vs float64: eager FP8 {err_eager:.4f}, compiled FP8 {err_compiled:.4f}")
assert err_compiled <= 1.5 * err_eager + 1e-3, f"compiled FP8 error {err_compiled:.4f} > 1.5 x eager {err_eager:.4f}"
loss = compiled(x, w1, w2).float().pow(2).mean()
loss.backward()
assert w1.grad is not None and torch.isfinite(w1.grad).all() and torch.isfinite(w2.grad).all()
print(f"FP8 compiled forward as accurate as eager FP8 and a training step ran (loss {loss.item():.4f})")
