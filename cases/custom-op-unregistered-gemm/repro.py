"""A custom op defined with torch.library and only a real kernel (no fake/meta kernel), called under torch.compile.

Run: python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

lib = torch.library.Library("mylib", "DEF")
lib.define("custom_gemm(Tensor a, Tensor b) -> Tensor")


def custom_gemm_impl(a, b):
    return a @ b


# A real kernel for the device's dispatch key only, as a C++/CUDA extension registers it.
lib.impl("custom_gemm", custom_gemm_impl, {"cpu": "CPU", "cuda": "CUDA"}.get(device, "PrivateUse1"))


def layer(a, b):
    return torch.relu(torch.ops.mylib.custom_gemm(a, b)) + 1


torch.manual_seed(0)
a = torch.randn(32, 64, device=device, dtype=dtype)
b = torch.randn(64, 16, device=device, dtype=dtype)
compiled = torch.compile(layer, fullgraph=True)
torch.testing.assert_close(compiled(a, b), layer(a, b))
print("compiled custom op matches eager")
