"""Fix: declare the spatial size as a derived dim, d = 2 * k, instead of a free Dim(16..64).

Down-sampling by 0.5 and up-sampling by 2 gives back the input size only for even sizes, so the trace adds the
guard 2 * (d // 2) == d, which a free d in 16..64 violates. With d = 2 * k the guard always holds; the exported
program is checked against eager at a second even size (48).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


class M(torch.nn.Module):
    def forward(self, x, y):
        x = torch.nn.functional.interpolate(x, scale_factor=0.5, mode="bilinear")
        x = torch.nn.functional.interpolate(x, scale_factor=2.0, mode="bilinear")
        return x + y


x, y = torch.rand(1, 1, 32, 32, device=device), torch.rand(1, 1, 32, 32, device=device)
k = torch.export.Dim("k", min=8, max=32)
d = 2 * k
ep = torch.export.export(M(), (x, y), dynamic_shapes={"x": {2: d, 3: d}, "y": {2: d, 3: d}})
x2, y2 = torch.rand(1, 1, 48, 48, device=device), torch.rand(1, 1, 48, 48, device=device)
torch.testing.assert_close(ep.module()(x2, y2), M()(x2, y2))
print("exported program (d = 2 * k) matches eager at 32 and 48")
