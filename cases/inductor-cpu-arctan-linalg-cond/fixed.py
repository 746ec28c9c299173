"""Fix: upcast to float64 for linalg.cond of a (near-)singular matrix.

arctan(ones(2, 2)) has four equal entries: the matrix is singular and its condition number is inf. In float32,
inductor's arctan is one ulp below eager's; for eager's value the SVD leaves a rounding residue as the smallest
singular value (4e-8, so cond 3.7e7), for inductor's it returns exactly 0 (cond inf): the finite result is noise.
In float64 both find the matrix singular, and compiled and eager agree. The compiled result is checked against eager.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def cond_of_arctan(x):
    return torch.linalg.cond(torch.arctan(x.to(torch.float64)))


x = torch.ones(2, 2, device=device, dtype=dtype)
eager = cond_of_arctan(x)
with torch.no_grad():
    compiled = torch.compile(cond_of_arctan)(x)
print("eager", eager.item(), "compiled", compiled.item())
assert torch.isfinite(compiled) == torch.isfinite(eager), f"compiled {compiled.item()} vs eager {eager.item()}"
torch.testing.assert_close(compiled, eager)
print("float64: compiled agrees with eager")
