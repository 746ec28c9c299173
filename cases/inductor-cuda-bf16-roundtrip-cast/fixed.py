"""Fix: inductor's emulate_precision_casts = True together with pattern_matcher = False, so the compiled kernel
rounds to bfloat16 where eager does.

Two inductor steps drop the rounding: the joint-graph pattern pass folds x.to(bfloat16).to(float32) into one cast
to float32 (releases with the fix keep a narrowing intermediate cast), and without emulate_precision_casts a cast to
bfloat16 inside a Triton kernel is computed in float32, its compute type. emulate_precision_casts makes the kernel
perform the bfloat16 rounding and pattern_matcher = False (at the cost of inductor's pattern rewrites) keeps the
cast pair in the graph. The compiled round trip is compared bitwise with eager, and checked to have really rounded.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

if not torch.cuda.is_available():
    print("needs CUDA (the issue is about the Triton kernel)")
    raise SystemExit(77)
import torch._inductor.config as inductor_config

if not hasattr(inductor_config, "emulate_precision_casts"):
    print("this torch has no inductor emulate_precision_casts")
    raise SystemExit(77)
inductor_config.emulate_precision_casts = True
inductor_config.pattern_matcher = False


def roundtrip(x):
    return x.to(torch.bfloat16).to(torch.float32)


torch.manual_seed(1234)
x = torch.randn(4, 4, device="cuda")
got, want = torch.compile(roundtrip)(x), roundtrip(x)
assert torch.equal(got, want), f"compiled {got} vs eager {want}"
assert not torch.equal(got, x), "the round trip did not round"
print("compiled round trip is bitwise equal to eager")
