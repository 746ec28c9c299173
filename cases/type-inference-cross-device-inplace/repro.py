"""cpu_tensor.add_(gpu_tensor) in eager and compiled: the compiled function must fail (or succeed) like eager.

Run: REPRO_DEVICE=cuda python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cuda")


def accumulate(acc_cpu, delta_gpu):
    acc_cpu.add_(delta_gpu * 2)
    return acc_cpu.sum()


def outcome(fn):
    acc, delta = torch.zeros(4, 4), torch.ones(4, 4, device=device)
    try:
        return ("ok", fn(acc, delta).item(), acc.sum().item())
    except Exception as err:  # noqa: BLE001 - we compare the failure with eager's
        # torch._dynamo re-raises eager errors as subclasses (TorchRuntimeError is a RuntimeError)
        return ("raised", next(c.__name__ for c in type(err).__mro__ if c.__module__ == "builtins"), "")


eager = outcome(accumulate)
compiled = outcome(torch.compile(accumulate, fullgraph=True))
print(f"eager: {eager}\ncompiled: {compiled}")
assert eager[0] == "raised", "eager accepted a cross-device in-place op"
assert compiled[0] == "raised", f"compiled silently accepted what eager rejects: {compiled}"
print("compiled rejects the cross-device in-place op like eager")
