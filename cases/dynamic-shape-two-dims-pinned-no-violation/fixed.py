"""Fix: check the dims with torch.export and a named Dim per dim, whose constraint solver reports the joint
specialization that mark_dynamic + torch.compile lets through.

Each of the guards a <= b, a >= b and a + b == 10 leaves a dim a range, so Dynamo's per-dim check passes, though
together they pin (a, b) to (5, 5). export solves the guards together against the declared Dims and raises
"Constraints violated (a, b)". The script exits 0 only when export names that violation.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


class M(torch.nn.Module):
    def forward(self, x):
        a, b = x.shape
        if a > b:
            return x + 1
        if a < b:
            return x - 1
        if a + b != 10:
            return x + 2
        return x + 3  # only (5, 5) gets here


x = torch.randn(5, 5, device=device, dtype=dtype)
a, b = torch.export.Dim("a"), torch.export.Dim("b")
try:
    torch.export.export(M(), (x,), dynamic_shapes={"x": {0: a, 1: b}})
except torch._dynamo.exc.UserError as err:
    assert "Constraints violated" in str(err), err
    print("export reports the specialization:", str(err).splitlines()[0])
else:
    raise AssertionError("export accepted dims that the guards pin to (5, 5)")
