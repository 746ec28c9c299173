"""The article's section 4.1 forward, verbatim, compiled (fullgraph) and exported, checked against eager.

Run: python repro.py

The article's other sentence (a violated torch._assert raises "CompileError") is not tested: torch defines no
exception class of that name, so no run could match it (claims.yaml says so under `untested`).
"""
import os

import torch
from torch import Tensor

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


class StaticGraphReady(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def large_batch_path(self, x):
        return self.conv(x).mean((2, 3))

    def small_batch_path(self, x):
        return self.conv(x).amax((2, 3))

    def forward(self, x: Tensor) -> Tensor:  # the article's code
        # static-graph ready: explicit shape assertions
        torch._assert(x.dim() == 4, "Input must be 4D")
        torch._assert(x.size(1) == 3, "Expected 3 input channels")
        # replace the dynamic branch with cond
        return torch.cond(
            x.size(0) > 16,
            lambda: self.large_batch_path(x),
            lambda: self.small_batch_path(x),
        )


torch.manual_seed(0)
model = StaticGraphReady().to(device=device, dtype=dtype)
compiled = torch.compile(model, fullgraph=True, dynamic=True)
for batch in (8, 32):  # both branches
    x = torch.randn(batch, 3, 12, 12, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x), model(x))
example = torch.randn(8, 3, 12, 12, device=device, dtype=dtype)
batch_dim = torch.export.Dim("batch", min=2, max=64)
exported = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch_dim}})
for batch in (8, 32):
    x = torch.randn(batch, 3, 12, 12, device=device, dtype=dtype)
    torch.testing.assert_close(exported.module()(x), model(x))
print("torch.cond forward compiles (fullgraph) and exports; both branches match eager")
