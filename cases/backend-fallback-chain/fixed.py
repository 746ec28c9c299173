"""What torch offers instead of a fallback chain: pick an available backend, and fall back to eager explicitly."""
import importlib.util
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def f(x):
    return torch.nn.functional.gelu(x @ x.t()) + 1


x = torch.randn(64, 64, device=device, dtype=dtype)
# list_backends() names backends whose packages may be missing (openxla without torch_xla): check the package.
usable = {"openxla": importlib.util.find_spec("torch_xla") is not None, "inductor": True}
backend = next(b for b in ("openxla", "inductor") if b in torch._dynamo.list_backends() and usable[b])
print(f"registered: {torch._dynamo.list_backends()}; using {backend}")
torch.testing.assert_close(torch.compile(f, backend=backend)(x), f(x))

# A backend that fails at compile time: suppress_errors turns the failure into a warning and runs the frame in eager.
torch._dynamo.config.suppress_errors = True
torch._dynamo.reset()
torch.testing.assert_close(torch.compile(f, backend="openxla")(x), f(x))
print("explicit choices: an available backend, and suppress_errors for an eager fallback")
