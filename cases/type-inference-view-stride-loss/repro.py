"""view() after symbolic shapes: strides and contiguity of compiled outputs vs eager, and the invalid view error.

Run: python repro.py
"""
import os

import torch

torch.manual_seed(0)  # the same data every run: the verdict never depends on the draw

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def invalid_view(x):
    return x.transpose(0, 1).view(-1)  # eager: view size is not compatible with input size and stride


def valid_views(x):
    y = x.transpose(0, 1)
    return y.reshape(-1), y.unsqueeze(0).view(1, x.shape[1], x.shape[0]), x.view(x.shape[0], -1, 2)


def outcome(fn, x):
    try:
        outs = fn(x)
        outs = outs if isinstance(outs, tuple) else (outs,)
        return [("ok", tuple(o.shape), o.stride(), o.is_contiguous()) for o in outs]
    except Exception as err:  # noqa: BLE001 - compared with eager
        # torch._dynamo re-raises eager errors as subclasses (TorchRuntimeError is a RuntimeError)
        return [("raised", next(c.__name__ for c in type(err).__mro__ if c.__module__ == "builtins"))]


problems = []
for fn in (invalid_view, valid_views):
    compiled = torch.compile(fn, dynamic=True)
    for n in (4, 6, 10):
        x = torch.randn(n, 8, device=device, dtype=dtype)
        eager, comp = outcome(fn, x), outcome(compiled, x)
        if eager != comp:
            problems.append(f"{fn.__name__}(n={n}): eager {eager} vs compiled {comp}")
for p in problems:
    print(p)
assert not problems, f"{len(problems)} stride/contiguity/error mismatches, first: {problems[0]}"
print("compiled views agree with eager on shape, stride, contiguity and errors")
