"""Fix: keep the sum a 0-d tensor instead of reading it with .item().

.item() under capture_scalar_outputs turns the value into an unbacked float symbol that the generated C++ kernel
must declare (the issue: undeclared zuf0). Broadcasting the 0-d tensor gives the same values with no symbol: the
kernel only reads a tensor. Compiled with fullgraph=True and checked against eager's .item() version, at the
tolerance of the dtype the sum is computed in (the compiled sum adds in another order: on an Intel Xeon it differed by
1.3e-7 relative, beyond float64's default tolerance, on an AMD EPYC not).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

torch._dynamo.config.capture_scalar_outputs = True


def with_item(x):
    s = x.sum().item()
    return torch.full((4,), s, device=x.device, dtype=torch.float64) + 1


def with_tensor(x):
    s = x.sum().to(torch.float64)
    return s.expand(4) + 1


torch.manual_seed(0)
x = torch.randn(8, device=device, dtype=dtype)
tolerance = {"rtol": 1.3e-6, "atol": 1e-5} if dtype == torch.float32 else {}  # float32's defaults
torch.testing.assert_close(torch.compile(with_tensor, fullgraph=True)(x), with_item(x), **tolerance)
print("compiled 0-d tensor version matches eager's .item() version")
