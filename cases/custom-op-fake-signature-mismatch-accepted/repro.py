"""A fake kernel missing the op's int argument: refused when registered, or only when torch.compile calls it?

Issue: https://github.com/pytorch/pytorch/issues/181851 (feature request: validate the fake kernel's signature at
registration). register_fake is given a function that lacks the op's `n`; if torch refuses it there, the script
says so and exits 0 (the request is met). Otherwise the op is compiled, and the mismatch surfaces only then, as
torch's own error when Dynamo calls the fake kernel.
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
except Exception as err:  # noqa: BLE001 - any refusal at registration is what the issue asks for
    print("refused at registration:", type(err).__name__, err)
else:
    print("register_fake accepted a fake kernel whose signature does not match the op's schema")
    x = torch.randn(3, device=device, dtype=dtype)
    torch.compile(lambda t: tile(t, 2), fullgraph=True)(x)
    print("compiled call ran")
