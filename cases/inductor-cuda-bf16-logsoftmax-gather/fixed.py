"""Fix: upcast before the projection: compute logits = h @ w.t() + bias in float32, not in bfloat16.

In bfloat16, eager rounds the matmul output and then the bias sum to bfloat16 (about 0.1 at logits of this size)
before log_softmax; the compiled graph fuses the bias add and the cast and may round once or at another place, so
per-token log-probabilities differ by far more than 1e-3. With float32 operands there is no intermediate
bfloat16 rounding to disagree on; the bfloat16 weights and activations are kept and upcast inside the function.
The compiled result is checked against eager at the issue's tolerance (atol=rtol=1e-3).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

if not torch.cuda.is_available():
    print("needs CUDA")
    raise SystemExit(77)
torch.backends.cuda.matmul.allow_tf32 = False  # full float32 matmuls in eager and compiled alike


def logps(h, w, bias, ids):
    logits = h.float() @ w.float().t() + bias.float()
    return torch.log_softmax(logits, dim=-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


torch.manual_seed(0)
bf = torch.bfloat16
h = torch.randn(4, 64, 512, device="cuda", dtype=bf)
w, bias = torch.randn(2048, 512, device="cuda", dtype=bf), torch.randn(2048, device="cuda", dtype=bf)
ids = torch.randint(0, 2048, (4, 64), device="cuda")
torch.testing.assert_close(torch.compile(logps)(h, w, bias, ids), logps(h, w, bias, ids), atol=1e-3, rtol=1e-3)
print("float32 logits: compiled matches eager")
