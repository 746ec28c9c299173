"""Two calls of one compiled function under the same infra TorchDispatchMode; the second must not recompile.

Issue: https://github.com/pytorch/pytorch/issues/144787
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

from torch._dynamo import config
from torch.utils._python_dispatch import TorchDispatchMode


class PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args, kwargs=None):
        return func(*args, **(kwargs or {}))

    @classmethod
    def is_infra_mode(cls):
        return True


f = torch.compile(lambda a, b: a @ b, backend="eager")
x = torch.ones(10, device=device, dtype=dtype)
for call in range(2):
    config.error_on_recompile = call == 1  # the second call must reuse the first compilation
    with PassThrough():
        f(x, x)
print("no recompilation under the dispatch mode")
