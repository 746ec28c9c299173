"""FP8 training by hand: float8 casts with dynamic per-tensor scales and torch._scaled_mm in forward AND backward.

Run: REPRO_DEVICE=cuda python repro.py   (needs compute capability >= 8.9)

Every Linear's forward is x_e4m3 @ w_e4m3; its backward computes grad_input = grad_e5m2 @ w_e4m3 and
grad_weight = grad_e5m2^T @ x_e4m3, all with torch._scaled_mm (the recipe FP8 training papers describe). A bfloat16
MLP is trained for a few AdamW steps in plain bfloat16 eager (the reference) and with these FP8 linears in eager,
torch.compile default, fullgraph=True and mode="max-autotune-no-cudagraphs". A mode fails when it raises, gives a
non-finite loss, or a loss off the bfloat16 loss by more than REL_TOL. Each mode prints one `FP8_CONFIG {json}` line;
the script fails (AssertionError) when any mode fails.
"""
import copy
import json
import os
import sys

import torch

device = os.environ.get("REPRO_DEVICE", "cuda")
if not device.startswith("cuda") or not torch.cuda.is_available() or torch.cuda.get_device_capability() < (8, 9):
    print("FP8 matmuls need a CUDA device of compute capability >= 8.9")
    sys.exit(77)

STEPS, REL_TOL = 5, 0.05
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
MODES = {"eager": None, "default": {}, "fullgraph": {"fullgraph": True},
         "max-autotune-no-cudagraphs": {"mode": "max-autotune-no-cudagraphs"}}


def cast(t, fp8):
    """(t in fp8, the inverse scale) with one dynamic scale for the whole tensor."""
    fmax = torch.finfo(fp8).max
    scale = fmax / t.abs().amax().float().clamp(min=1e-12)
    return (t.float() * scale).clamp(-fmax, fmax).to(fp8), scale.reciprocal()


def col_major(t):
    return t.t().contiguous().t()


def mm(a, sa, b, sb):
    """a @ b for a row-major, b column-major FP8 operands, output bfloat16."""
    return torch._scaled_mm(a, col_major(b), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


class FP8MatMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):  # x (M, K), w (N, K)
        xq, xs = cast(x, E4M3)
        wq, ws = cast(w, E4M3)
        ctx.save_for_backward(xq, xs, wq, ws)
        return mm(xq, xs, wq.t(), ws)

    @staticmethod
    def backward(ctx, grad):  # grad (M, N)
        xq, xs, wq, ws = ctx.saved_tensors
        gq, gs = cast(grad, E5M2)
        grad_x = mm(gq, gs, wq, ws)  # (M, N) @ (N, K)
        grad_w = mm(gq.t().contiguous(), gs, xq, xs)  # (N, M) @ (M, K)
        return grad_x, grad_w


class FP8Linear(torch.nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.weight, self.bias = linear.weight, linear.bias

    def forward(self, x):
        return FP8MatMul.apply(x, self.weight) + self.bias


def build(fp8):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 2048), torch.nn.GELU(),
        torch.nn.Linear(2048, 512)).to(device=device, dtype=torch.bfloat16)
    if fp8:
        for i, layer in enumerate(model):
            if isinstance(layer, torch.nn.Linear):
                model[i] = FP8Linear(layer)
    return model


torch.manual_seed(1)
x = torch.randn(512, 512, device=device, dtype=torch.bfloat16)
target = torch.tanh(x @ (torch.randn(512, 512, device=device, dtype=torch.bfloat16) / 512 ** 0.5))


def train(model, compile_kw):
    step_model = model if compile_kw is None else torch.compile(model, **compile_kw)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(step_model(x).float(), target.float())
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


reference = train(build(False), None)
print("bfloat16 eager losses: " + ", ".join(f"{v:.5f}" for v in reference))
failed = []
for mode, kw in MODES.items():
    torch._dynamo.reset()
    row = {"path": "manual float8 + torch._scaled_mm", "recipe": "tensorwise", "mode": mode}
    try:
        losses = train(copy.deepcopy(build(True)), kw)
        worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
        row.update(losses=[round(v, 5) for v in losses], worst_rel_diff=round(worst, 4),
                   ok=all(v == v and abs(v) != float("inf") for v in losses) and worst <= REL_TOL)
    except Exception as err:  # noqa: BLE001 - one mode's failure is recorded, the others still run
        row.update(ok=False, error=f"{type(err).__module__}.{type(err).__qualname__}: "
                                   f"{str(err).strip().splitlines()[0][:200] if str(err).strip() else ''}")
    print("FP8_CONFIG " + json.dumps(row), flush=True)
    if not row["ok"]:
        failed.append(mode)
print(f"FP8 configurations failing: {len(failed)}/{len(MODES)}")
assert not failed, f"FP8 training modes failing ({len(failed)}/{len(MODES)}): {failed}"
