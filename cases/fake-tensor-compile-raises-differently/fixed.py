"""Fix: enter FakeTensorMode(allow_non_fake_inputs=True) around the compiled call, as the compiled path's
AssertionError ("... or instantiate FakeTensorMode with 'allow_non_fake_inputs'") advises.

The compiled function holds torch.tensor([800, 1216]) as a real constant, so under a strict FakeTensorMode reading
its values trips the fake mode's real-tensor check (AssertionError) before the data-dependent read is reached.
Allowing non-fake inputs lets the constant through, and reading its values as a shape then raises the same
DataDependentOutputException as eager. The script compares the two exception types.
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
        with FakeTensorMode(allow_non_fake_inputs=True):
            fn()
    except Exception as err:
        return type(err)
    return None


eager = outcome(f)
compiled = outcome(torch.compile(f, fullgraph=True))
print("eager:", eager, "compiled:", compiled)
assert eager is not None, "eager did not raise under FakeTensorMode"
assert compiled is eager or (compiled and issubclass(compiled, eager)), (
    f"eager raises {eager}, compiled raises {compiled}")
print("compiled raises the same fake-tensor exception as eager")
