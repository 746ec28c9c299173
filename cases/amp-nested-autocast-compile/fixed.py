"""Fix (what the article recommends, made explicit): one autocast region, precision changed by explicit casts."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
low = getattr(torch, os.environ.get("REPRO_DTYPE", "bfloat16"))
device_type = device.split(":")[0]


def block(x, w1, w2, w3):
    with torch.autocast(device_type, dtype=low):
        a = x @ w1
        c_in = a.float()
    b = c_in @ w2  # outside autocast: float32
    with torch.autocast(device_type, dtype=low):
        c = b @ w3
    return a, b, c


torch.manual_seed(0)
x, w1, w2, w3 = (torch.randn(32, 32, device=device) for _ in range(4))
eager = block(x, w1, w2, w3)
compiled = torch.compile(block, fullgraph=True)(x, w1, w2, w3)
assert [t.dtype for t in compiled] == [low, torch.float32, low], [t.dtype for t in compiled]
for e, c in zip(eager, compiled):
    torch.testing.assert_close(c, e, atol=5e-2, rtol=5e-2)
print("flat autocast regions: compiled matches eager")
