"""Fixed upstream (the issue is closed): the argmax -> max -> sum -> add chain compiled on CUDA finishes and matches
eager.

The issue was that Triton's compiler never finished scheduling the kernel inductor generated for this chain of
tiny reductions. The script compiles the function whole (fullgraph=True), so the chain is one inductor graph, and
requires the integer result to equal eager's.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

if not torch.cuda.is_available():
    print("needs CUDA (Triton)")
    raise SystemExit(77)


def f(x):
    a = x.argmax(3)
    b = a.max(2).values
    return b + b.sum(0)


torch.manual_seed(0)
x = torch.rand(2, 1, 1, 1, device="cuda")
got, want = torch.compile(f, fullgraph=True)(x), f(x)
assert got.dtype == want.dtype and torch.equal(got, want), (got, want)
print("compiled chain finished and equals eager")
