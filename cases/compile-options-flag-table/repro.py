"""Try every option of the article's per-hardware flag table in its own torch.compile call; list what torch rejects.

Run: python repro.py   (REPRO_DEVICE=cuda for the GPU rows)
"""
import os

import torch

torch.manual_seed(0)  # the same data every run: the verdict never depends on the draw

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

# (row of the article's table, option, value); "backend" rows pass a backend name instead of an option.
TABLE = [
    ("A100/H100/RTX4090", "triton.cudagraphs", True),
    ("A100/H100/RTX4090", "max_autotune", True),
    ("RTX4090 (disable)", "dynamic_shapes", False),
    ("H100", "cubin_cache", True),
    ("H100 (disable)", "fallback_to_nvfuser", False),
    ("MI300X", "backend", "aot_eager"),
]


def f(x):
    return torch.nn.functional.silu(x @ x.t()).sum(-1)


rejected = []
for row, option, value in TABLE:
    torch._dynamo.reset()
    x = torch.randn(32, 32, device=device, dtype=dtype)
    try:
        if option == "backend":
            compiled = torch.compile(f, backend=value)
        else:
            compiled = torch.compile(f, options={option: value})
        torch.testing.assert_close(compiled(x), f(x), atol=1e-3, rtol=1e-3)
        print(f"{row:20} {option}={value!r}: accepted")
    except Exception as err:  # noqa: BLE001 - recording each option's fate
        print(f"{row:20} {option}={value!r}: {type(err).__name__}: {str(err).splitlines()[0][:100]}")
        rejected.append(option)
assert not rejected, f"options not accepted by torch.compile: {rejected}"
print("every option in the table is accepted")
