"""A fake kernel missing the op's int argument: refused when registered, or only when torch.compile calls it?

Issue: https://github.com/pytorch/pytorch/issues/181851 (feature request: validate at registration).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

@torch.library.custom_op("repro181851::tile", mutates_args=())
def tile(x: torch.Tensor, n: int) -> torch.Tensor:
    return x.clone().repeat(n)


try:
    @tile.register_fake
    def _(x):  # wrong: the op also takes n
        return x.clone()
except Exception as err:
    print("refused at registration:", type(err).__name__, err)
else:
    raise AssertionError("register_fake accepted a fake kernel whose signature does not match the op's schema")
