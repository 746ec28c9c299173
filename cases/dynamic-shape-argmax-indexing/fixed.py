"""Fix: run the indexing in eager with torch.compiler.disable; the rest of the model stays compiled.

fullgraph=True is dropped because a disabled function is, by design, a graph break. Checked against eager on 3-D
inputs (the case's shape).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


@torch.compiler.disable
def dynamic_indexing(x):
    return x[:, torch.argmax(x.mean(-1), dim=-1)]


def model_forward(x):
    return torch.relu(dynamic_indexing(x * 2)) + 1


def reference(x):
    y = x * 2
    return torch.relu(y[:, torch.argmax(y.mean(-1), dim=-1)]) + 1


torch.manual_seed(0)
compiled = torch.compile(model_forward, dynamic=True, backend="inductor")
for batch in (4, 6):
    x = torch.randn(batch, 10, 16, device=device, dtype=dtype)
    torch.testing.assert_close(compiled(x), reference(x))
print("compiled result matches eager")
