"""Fix: set torch._functorch.config.backward_pass_autocast = "off" (the recommended setting; its default changes to
"off" in later releases).

With the default "same_as_forward", AOTAutograd traces the compiled region's backward under the outer
autocast(bfloat16) that was active at the forward, so the weight gradient's matmul runs in bfloat16. Eager runs
backward outside autocast, in float32. "off" traces the backward without autocast, as eager runs it; the compiled
weight gradient is then bitwise equal to eager's.
"""
import os

import torch
import torch._functorch.config

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

torch._functorch.config.backward_pass_autocast = "off"

torch.manual_seed(0)
lin = torch.nn.Linear(64, 64, device=device)
h = torch.randn(4, 64, device=device, dtype=torch.bfloat16, requires_grad=True)
kind = torch.device(device).type


def inner(x):
    with torch.autocast(kind, enabled=False):
        return x.float() @ lin.weight.float().T


def grad_of(fn):
    lin.weight.grad = None
    with torch.autocast(kind, dtype=torch.bfloat16):
        out = fn(h)
    out.sum().backward()
    return lin.weight.grad.clone()


eager, compiled = grad_of(inner), grad_of(torch.compile(inner, backend="aot_eager"))
assert compiled.dtype == torch.float32, compiled.dtype
assert torch.equal(eager, compiled), f"weight gradients differ: max abs diff {(eager - compiled).abs().max().item()}"
print("compiled weight gradient equals eager with backward_pass_autocast='off'")
