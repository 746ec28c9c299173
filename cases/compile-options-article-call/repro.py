"""The article's "immediately effective fix" block: its exact torch.compile call, on the block's own indexing.

Run: python repro.py   (REPRO_DEVICE=cuda for a GPU)

Only the compile call is tested here: the block's torch.is_compiling() branch is the article's other claim
(dynamic-shape-argmax-indexing, article_fix.py), so it is left out and cannot decide this one.
"""
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
        return x[:, torch.argmax(x.mean(-1), dim=-1)]  # the block's indexing, without its is_compiling() branch


torch.manual_seed(0)
model = Model().to(device=device, dtype=dtype)
compiled_model = torch.compile(
    model,
    fullgraph=True,
    dynamic=True,
    backend="inductor",
    options={"disable_cpp_codegen": True},  # the article: avoids CUDA Graph conflicts on H100
)
tol = {} if dtype == torch.float32 else {"atol": 1e-2, "rtol": 1e-2}
with torch.no_grad():
    for batch in (4, 6):
        x = torch.randn(batch, 10, 16, device=device, dtype=dtype)
        torch.testing.assert_close(compiled_model(x), model(x), **tol)
print("the article's compile call runs and matches eager")
