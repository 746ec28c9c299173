"""Fix: declare the op with torch.library.custom_op and register a fake kernel for shape inference."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


@torch.library.custom_op("mylib::custom_gemm", mutates_args=())
def custom_gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


@custom_gemm.register_fake
def _(a, b):
    return a.new_empty(a.shape[0], b.shape[1])


def layer(a, b):
    return torch.relu(torch.ops.mylib.custom_gemm(a, b)) + 1


torch.manual_seed(0)
a = torch.randn(32, 64, device=device, dtype=dtype)
b = torch.randn(64, 16, device=device, dtype=dtype)
compiled = torch.compile(layer, fullgraph=True)
torch.testing.assert_close(compiled(a, b), torch.relu(a @ b) + 1)
print("compiled custom op matches eager")
