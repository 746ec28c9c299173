"""The same model with the option that actually controls CUDA graphs in inductor (triton.cudagraphs=False)."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x):
        x = self.proj(x)
        return x[:, torch.argmax(x.mean(-1), dim=-1)]


torch.manual_seed(0)
model = Model().to(device=device, dtype=dtype)
compiled_model = torch.compile(model, fullgraph=True, dynamic=True, backend="inductor",
                               options={"triton.cudagraphs": False})
tol = {} if dtype == torch.float32 else {"atol": 1e-2, "rtol": 1e-2}
with torch.no_grad():
    for batch in (4, 6):
        x = torch.randn(batch, 10, 16, device=device, dtype=dtype)
        torch.testing.assert_close(compiled_model(x), model(x), **tol)
print("compiled result matches eager")
