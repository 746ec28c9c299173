"""Fixed upstream (the issue is closed): the same two calls under one infra TorchDispatchMode, checked.

Dynamo guards on the active dispatch modes; an infra mode is meant to be ignored by those guards, so the second call
under the same mode must reuse the first graph. The script makes any recompilation an error
(error_on_recompile), counts the compiled frames, and checks the results against eager.
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

from torch._dynamo import config
from torch._dynamo.testing import CompileCounter
from torch.utils._python_dispatch import TorchDispatchMode


class PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args, kwargs=None):
        return func(*args, **(kwargs or {}))

    @classmethod
    def is_infra_mode(cls):
        return True


def matmul(a, b):
    return a @ b


counter = CompileCounter()
f = torch.compile(matmul, backend=counter)
x = torch.arange(10, device=device, dtype=dtype)
for call in range(2):
    config.error_on_recompile = call == 1  # the second call must reuse the first compilation
    with PassThrough():
        got = f(x, x)
    torch.testing.assert_close(got, matmul(x, x))
assert counter.frame_count == 1, f"{counter.frame_count} compilations for two calls"
print("one compilation for two calls under the dispatch mode; results match eager")
