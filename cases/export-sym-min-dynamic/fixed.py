"""Fix: declare the batch dim as Dim.DYNAMIC(min=2, max=4096) instead of a named Dim("batch", min=2, max=4096).

Slicing x[:sym_min(n, 1000)] makes the trace guard sym_min(1000, n) <= n. That holds for every n, but the named
Dim's constraint solver does not prove it and refuses the export with "Constraints violated (batch)" (the failure
torch 2.13 shows instead of the issue's "Unsupported target type: sym_min"). Dim.DYNAMIC keeps the dim symbolic
without demanding that proof, and the guard stays a runtime check. The exported program is checked against eager
below and above 1000 rows.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


class Head(torch.nn.Module):
    def forward(self, x):
        n = torch.sym_min(x.shape[0], 1000)
        return x[:n] * 2


x = torch.randn(12, 4, device=device, dtype=dtype)
ep = torch.export.export(Head(), (x,), dynamic_shapes={"x": {0: torch.export.Dim.DYNAMIC(min=2, max=4096)}})
x_node = [n for n in ep.graph.nodes if n.op == "placeholder"][-1]
assert isinstance(x_node.meta["val"].shape[0], torch.SymInt), f"the exported dim is static: {x_node.meta['val'].shape}"
for rows in (20, 2000):
    y = torch.randn(rows, 4, device=device, dtype=dtype)
    torch.testing.assert_close(ep.module()(y), Head()(y))
print("exported program with Dim.DYNAMIC matches eager for 20 and 2000 rows")
