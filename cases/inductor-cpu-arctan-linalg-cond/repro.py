"""linalg.cond of arctan(ones(2, 2)) compiled with inductor, compared with eager.

Issue: https://github.com/pytorch/pytorch/issues/150114 (eager 3.7e7, inductor inf).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def cond_of_arctan(x):
    return torch.linalg.cond(torch.arctan(x))


x = torch.ones(2, 2, device=device, dtype=dtype)
eager = cond_of_arctan(x)
with torch.no_grad():
    compiled = torch.compile(cond_of_arctan)(x)
print("eager", eager.item(), "compiled", compiled.item())
assert torch.isfinite(compiled) == torch.isfinite(eager), f"compiled {compiled.item()} vs eager {eager.item()}"
print("compiled agrees with eager on finiteness")
