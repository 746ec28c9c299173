"""Per-token log-probabilities from bfloat16 logits with a bias, compiled on CUDA vs eager.

Issue: https://github.com/pytorch/pytorch/issues/150638 (allclose(atol=1e-3, rtol=1e-3) is False). A tolerance of
1e-3 is below bfloat16's precision (2**-8 relative), so both are checked against a float64 reference of the same
inputs: the bug is a compiled result farther from it than eager plus one bfloat16 rounding.
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


def check(name, got, want, ref):
    """Compiled and eager against the float64 reference: compiled may be off by eager's own error plus one bfloat16
    rounding at the output's scale (2**-8 of its largest magnitude), the precision bfloat16 has."""
    err_c, err_e = (got.double() - ref).abs().max().item(), (want.double() - ref).abs().max().item()
    bound = err_e + 2.0 ** -8 * ref.abs().max().item()
    assert err_c <= bound, (f"{name}: compiled is {err_c:.4g} from the float64 reference, eager {err_e:.4g} "
                            f"(allowed {bound:.4g})")
    return err_c, err_e


torch.manual_seed(0)
bf = torch.bfloat16
h = torch.randn(4, 64, 512, device="cuda", dtype=bf)
w, bias = torch.randn(2048, 512, device="cuda", dtype=bf), torch.randn(2048, device="cuda", dtype=bf)
ids = torch.randint(0, 2048, (4, 64), device="cuda")
ref = logps(h.double(), w.double(), bias.double(), ids)  # .float() inside: a float32 log_softmax of exact logits
err_c, err_e = check("log-probabilities", torch.compile(logps)(h, w, bias, ids), logps(h, w, bias, ids), ref)
print(f"compiled {err_c:.3g}, eager {err_e:.3g} from the float64 reference: within one bfloat16 rounding")
