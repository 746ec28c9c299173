"""Fix: torch._dynamo.maybe_mark_dynamic instead of mark_dynamic, as the constraint-violation error advises.

The code pins the dim to 5 (x.shape[0] > 5 and < 5 both false), so a strict mark_dynamic must fail; the issue (now
fixed) was that it did not. maybe_mark_dynamic is a hint that Dynamo may specialize: the frame compiles for size 5,
and another size gets its own graph. Both compiled results are checked against eager.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def fn(x):
    if x.shape[0] > 5:
        return x.cos()
    if x.shape[0] < 5:
        return x * 2
    return x.sin()  # only x.shape[0] == 5 gets here


compiled = torch.compile(fn, backend="eager")
for rows in (5, 7):
    x = torch.randn(rows, 3, 3, device=device, dtype=dtype)
    torch._dynamo.maybe_mark_dynamic(x, 0)
    torch.testing.assert_close(compiled(x), fn(x))
print("maybe_mark_dynamic: compiled matches eager for sizes 5 and 7")
