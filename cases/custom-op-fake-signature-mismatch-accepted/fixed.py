"""Fix: a fake kernel with the op's signature; compiled checked against eager.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

@torch.library.custom_op("repro181851::tile", mutates_args=())
def tile(x: torch.Tensor, n: int) -> torch.Tensor:
    return x.clone().repeat(n)


@tile.register_fake
def _(x, n):
    return x.new_empty(x.shape[0] * n)


x = torch.randn(3, device=device, dtype=dtype)
torch.testing.assert_close(torch.compile(lambda t: tile(t, 2), fullgraph=True)(x), tile(x, 2))
print("compiled matches eager")
