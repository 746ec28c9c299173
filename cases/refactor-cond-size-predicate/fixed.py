"""torch.cond with explicit operands (the documented signature) and torch._check for the shape contract."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


class StaticGraphReady(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        torch._check(x.size(1) == 3, lambda: "Expected 3 input channels")
        return torch.cond(x.size(0) > 16, lambda t: self.conv(t).mean((2, 3)), lambda t: self.conv(t).amax((2, 3)),
                          (x,))


torch.manual_seed(0)
model = StaticGraphReady().to(device=device, dtype=dtype)
compiled = torch.compile(model, fullgraph=True, dynamic=True)
batch_dim = torch.export.Dim("batch", min=2, max=64)
exported = torch.export.export(model, (torch.randn(8, 3, 12, 12, device=device, dtype=dtype),),
                               dynamic_shapes={"x": {0: batch_dim}})
for batch in (8, 32):
    x = torch.randn(batch, 3, 12, 12, device=device, dtype=dtype)
    ref = model.conv(x).mean((2, 3)) if batch > 16 else model.conv(x).amax((2, 3))
    torch.testing.assert_close(compiled(x), ref)
    torch.testing.assert_close(exported.module()(x), ref)
print("cond with operands: compiled and exported both branches match eager")
