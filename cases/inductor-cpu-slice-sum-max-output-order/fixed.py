"""Fixed upstream (the issue is closed): the strided negative-start slices feeding sum and max, compiled with the
outputs in both orders, each checked against eager.

The issue was that inductor's CPU kernels gave different (wrong) values depending on which output came first. The
script compiles each order separately (fullgraph=True) and also checks that the two compiled versions agree with
each other.
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
s1, m1 = torch.compile(sum_first, fullgraph=True)(x)
m2, s2 = torch.compile(max_first, fullgraph=True)(x)
want_s, want_m = sum_first(x)
for got, want in ((s1, want_s), (m1, want_m), (s2, want_s), (m2, want_m)):
    torch.testing.assert_close(got, want)
torch.testing.assert_close(s1, s2)
torch.testing.assert_close(m1, m2)
print("both output orders match eager")
