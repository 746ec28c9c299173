"""Building a shape from a tensor's values under FakeTensorMode: eager raises a fake-tensor exception; compiled?

Issue: https://github.com/pytorch/pytorch/issues/158088
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

from torch._subclasses.fake_tensor import FakeTensorMode

torch._dynamo.config.capture_scalar_outputs = True


def f():
    sizes = torch.tensor([800, 1216])
    return torch.ones(list(sizes))


def outcome(fn):
    try:
        with FakeTensorMode():
            fn()
    except Exception as err:
        return type(err)
    return None


eager = outcome(f)
compiled = outcome(torch.compile(f, fullgraph=True))
print("eager:", eager, "compiled:", compiled)
assert compiled is eager or (eager and compiled and issubclass(compiled, eager)), (
    f"eager raises {eager}, compiled raises {compiled}")
