"""Nested autocast regions (outer low precision, inner disabled, inner other dtype) under torch.compile vs eager.

Run: REPRO_DTYPE=bfloat16 python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
low = getattr(torch, os.environ.get("REPRO_DTYPE", "bfloat16"))
device_type = device.split(":")[0]


def block(x, w1, w2, w3):
    with torch.autocast(device_type, dtype=low):
        a = x @ w1  # low precision
        with torch.autocast(device_type, enabled=False):
            b = a.float() @ w2  # float32: autocast disabled inside
        with torch.autocast(device_type, dtype=low):  # nested again, same dtype: should change nothing
            c = b @ w3
    return a, b, c


torch.manual_seed(0)
x, w1, w2, w3 = (torch.randn(32, 32, device=device) for _ in range(4))
eager = block(x, w1, w2, w3)
compiled = torch.compile(block, fullgraph=True)(x, w1, w2, w3)
for name, e, c in zip("abc", eager, compiled):
    assert e.dtype == c.dtype, f"{name}: eager {e.dtype}, compiled {c.dtype}"
    torch.testing.assert_close(c, e, atol=5e-2, rtol=5e-2, msg=lambda m, n=name: f"{n}: {m}")
print("nested autocast under compile: dtypes", [t.dtype for t in compiled], "match eager")
