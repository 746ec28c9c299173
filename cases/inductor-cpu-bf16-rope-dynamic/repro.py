"""bfloat16 rotary embedding compiled with dynamic shapes on CPU, against a float64 reference of the same inputs.

The bfloat16 result may differ from eager by bfloat16 rounding (eager rounds after every op, inductor fuses them);
the bug is a compiled result farther from the exact RoPE than eager plus one bfloat16 rounding.

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
q = torch.randn(1, 2, 7, 16, device=device, dtype=bf)
k = torch.randn(1, 1, 7, 16, device=device, dtype=bf)
cos, sin = torch.randn(1, 7, 16, device=device, dtype=bf), torch.randn(1, 7, 16, device=device, dtype=bf)
compiled = torch.compile(rope, fullgraph=True, dynamic=True)(q, k, cos, sin)
reference = rope(q.double(), k.double(), cos.double(), sin.double())
for name, got, want, ref in zip("qk", compiled, rope(q, k, cos, sin), reference):
    err_c, err_e = check(name, got, want, ref)
    print(f"{name}: compiled {err_c:.3g}, eager {err_e:.3g} from the float64 reference")
print("compiled bfloat16 RoPE is as close to float64 as eager, within one bfloat16 rounding")
