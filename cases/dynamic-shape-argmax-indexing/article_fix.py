"""The article's fix as printed: branch on torch.is_compiling() to an eager "fallback", compiled with its call.

The article's model_forward and compile call (its `options` are tested in compile-options-article-call); the article
does not show _dynamic_indexing_fallback, so it is the same indexing here. Run on a 2-D and a 3-D input (the article
gives no shape), each compiled result checked against eager.
Run: python article_fix.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))


def _dynamic_indexing_fallback(x):
    return x[:, torch.argmax(x.mean(-1), dim=-1)]


def model_forward(x):
    # dynamic indexing logic -- explicitly leave compilation (the article's words)
    if torch.is_compiling():
        return _dynamic_indexing_fallback(x)  # run in eager mode
    return x[:, torch.argmax(x.mean(-1), dim=-1)]


torch.manual_seed(0)
compiled_model = torch.compile(model_forward, fullgraph=True, dynamic=True, backend="inductor")
for shape in ((4, 10), (6, 10), (4, 10, 16), (6, 10, 16)):
    x = torch.randn(*shape, device=device, dtype=dtype)
    torch.testing.assert_close(compiled_model(x), x[:, torch.argmax(x.mean(-1), dim=-1)])
print("the article's fallback compiles and matches eager for 2-D and 3-D inputs")
