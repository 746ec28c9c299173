"""A size read from tensor data (.item(), an unbacked SymInt) decides which computation runs, under fullgraph=True.

The count of valid entries chooses between two ways of scaling them (a capacity check, as in token routing): the
comparison needs the symbol's value, which the shape environment does not know at trace time.
capture_scalar_outputs=True makes .item() give an unresolved symbolic size on every release; torch._check gives the
slice its bounds, so the comparison is the only place where the symbol's value is needed (the slice without bounds
is the case type-inference-symbolic-shape-break). The compiled result is checked against eager.
Run: python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
torch._dynamo.config.capture_scalar_outputs = True
CAPACITY = 8


def route(x, lengths):
    total = int(lengths.sum().item())  # data-dependent size: an unbacked SymInt under compile
    torch._check(total >= 0)
    torch._check(total <= x.numel())
    kept = x.flatten()[:total]
    if total > CAPACITY:  # over capacity: scale the kept entries down
        return kept * (CAPACITY / total)
    return kept


torch.manual_seed(0)
x = torch.randn(6, 8, device=device, dtype=dtype)
compiled = torch.compile(route, fullgraph=True, dynamic=True)
for lengths in ([3, 5, 2], [1, 2]):
    lengths = torch.tensor(lengths, device=device)
    torch.testing.assert_close(compiled(x, lengths), route(x, lengths))
print("compiled result matches eager")
