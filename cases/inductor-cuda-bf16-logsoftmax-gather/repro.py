"""Per-token log-probabilities from bfloat16 logits with a bias, compiled on CUDA vs eager.

Issue: https://github.com/pytorch/pytorch/issues/150638 (allclose(atol=1e-3, rtol=1e-3) is False).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

if not torch.cuda.is_available():
    print("needs CUDA")
    raise SystemExit(77)


def logps(h, w, bias, ids):
    logits = h @ w.t() + bias
    return torch.log_softmax(logits.float(), dim=-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


torch.manual_seed(0)
bf = torch.bfloat16
h = torch.randn(4, 64, 512, device="cuda", dtype=bf)
w, bias = torch.randn(2048, 512, device="cuda", dtype=bf), torch.randn(2048, device="cuda", dtype=bf)
ids = torch.randint(0, 2048, (4, 64), device="cuda")
torch.testing.assert_close(torch.compile(logps)(h, w, bias, ids), logps(h, w, bias, ids), atol=1e-3, rtol=1e-3)
print("compiled matches eager")
