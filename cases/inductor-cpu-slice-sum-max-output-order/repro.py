"""sum over x[-1850::43] and max(x[-1850:-1849], -x[-1850::43]), returned in both orders, compiled vs eager.

Issue: https://github.com/pytorch/pytorch/issues/113015
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

def sum_first(x):
    a, b = x[-1850:-1849], x[-1850::43]
    return b.sum(0), torch.max(a, torch.neg(b))


def max_first(x):
    s, m = sum_first(x)
    return m, s


torch.manual_seed(0)
x = torch.randn(1900, 3, 4, device=device, dtype=dtype)
for fn in (sum_first, max_first):
    for got, want in zip(torch.compile(fn)(x), fn(x)):
        torch.testing.assert_close(got, want, msg=lambda m, f=fn.__name__: f"{f}: {m}")
print("both output orders match eager")
