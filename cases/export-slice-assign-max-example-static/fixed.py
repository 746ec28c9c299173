"""Fix: export with an example size strictly inside the Dim's range (7 for Dim(1..10)), not at its max.

The issue reports that an example at the max (10), where the slice cache[0:n] covers the whole buffer, gave a
program specialized to 10 without any error, while an inner example kept the dim symbolic. The script checks that
the exported input dim is symbolic, then runs the program at 5 and at 10 and checks its output and buffer against
eager.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


class Cache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(10, device=device))

    def forward(self, x):
        self.cache[0: x.shape[0]] = x
        return x * 2


dim = torch.export.Dim("n", min=1, max=10)
ep = torch.export.export(Cache(), (torch.randn(7, device=device),), dynamic_shapes={"x": {0: dim}})
x_node = [n for n in ep.graph.nodes if n.op == "placeholder"][-1]
assert isinstance(x_node.meta["val"].shape[0], torch.SymInt), f"the exported dim is static: {x_node.meta['val'].shape}"
exported, eager = ep.module(), Cache()
for n in (5, 10):
    x = torch.randn(n, device=device)
    torch.testing.assert_close(exported(x), eager(x))
    torch.testing.assert_close(exported.cache, eager.cache)
print("the exported program accepts sizes 5 and 10 and updates the buffer like eager")
