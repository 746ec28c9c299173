"""Dtype and layout conflicts in in-place ops: compiled must behave like eager (same error class or same values).

Run: python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")


def float_into_int(a, b):
    a.add_(b * 0.5)  # eager: result type Float can't be cast to Long
    return a


def double_into_float(a, b):
    a.mul_(b.double())  # allowed in eager: computed in float64, cast back to float32
    return a


def write_through_transpose(a, b):
    a.t().add_(b)  # non-contiguous view of the input
    return a.contiguous()


cases = {
    "float_into_int": (float_into_int, lambda: (torch.arange(16, device=device).reshape(4, 4),
                                                torch.ones(4, 4, device=device))),
    "double_into_float": (double_into_float, lambda: (torch.full((4, 4), 1.1, device=device),
                                                      torch.full((4, 4), 3.3, device=device))),
    "write_through_transpose": (write_through_transpose, lambda: (torch.arange(16.0, device=device).reshape(4, 4),
                                                                  torch.triu(torch.ones(4, 4, device=device)))),
}


def run(fn, make):
    a, b = make()
    try:
        out = fn(a, b)
        return ("ok", out.dtype, out.cpu(), a.cpu())
    except Exception as err:  # noqa: BLE001 - compared with eager
        # torch._dynamo re-raises eager errors as subclasses (TorchRuntimeError is a RuntimeError)
        return ("raised", next(c.__name__ for c in type(err).__mro__ if c.__module__ == "builtins"))


mismatches = []
for name, (fn, make) in cases.items():
    eager, compiled = run(fn, make), run(torch.compile(fn, fullgraph=True), make)
    print(f"{name}: eager {eager[:2]}, compiled {compiled[:2]}")
    same = eager[:2] == compiled[:2] and (eager[0] == "raised" or (torch.equal(eager[2], compiled[2])
                                                                  and torch.equal(eager[3], compiled[3])))
    if not same:
        mismatches.append(f"{name}: eager {eager[:2]} vs compiled {compiled[:2]}")
assert not mismatches, "; ".join(mismatches)
print("compiled matches eager on every dtype/layout conflict")
