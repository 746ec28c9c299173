"""A dim marked dynamic that two guards pin to 5: Dynamo should refuse with a constraint violation.

Issue: https://github.com/pytorch/pytorch/issues/122307
"""
import os

import torch

torch.manual_seed(0)  # the same data every run: the verdict never depends on the draw

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def fn(x):
    if x.shape[0] > 5:
        return x.cos()
    if x.shape[0] < 5:
        return x * 2
    return x.sin()  # only x.shape[0] == 5 gets here


x = torch.randn(5, 3, 3, device=device, dtype=dtype)
torch._dynamo.mark_dynamic(x, 0)
try:
    torch.compile(fn, backend="eager")(x)
except Exception as err:  # ConstraintViolationError, possibly wrapped
    assert "Constraints violated" in str(err) or "ConstraintViolation" in type(err).__name__, err
    print("raised:", type(err).__name__)
else:
    raise AssertionError("the dynamic dim was specialized to 5 without a ConstraintViolationError")
