"""Fix: let Dynamo capture the scalar (capture_scalar_outputs) and tell it the bounds with torch._check."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
torch._dynamo.config.capture_scalar_outputs = True


def bucketize_rows(x, lengths):
    total = lengths.sum().item()
    torch._check(total >= 0)
    torch._check(total <= x.numel())
    positions = torch.arange(total, device=x.device)
    return x.flatten()[:total].reshape(total, 1) * positions.unsqueeze(1).to(x.dtype)


def reference(x, lengths):
    total = int(lengths.sum())
    return x.flatten()[:total].reshape(total, 1) * torch.arange(total, device=x.device).unsqueeze(1).to(x.dtype)


torch.manual_seed(0)
compiled = torch.compile(bucketize_rows, fullgraph=True, dynamic=True)
x = torch.randn(6, 8, device=device, dtype=dtype)
for lengths in ([3, 5, 2], [1, 1], [10, 20, 4]):
    lengths = torch.tensor(lengths, device=device)
    torch.testing.assert_close(compiled(x, lengths), reference(x, lengths))
print("compiled result matches eager for every length")
