"""Fix: make the branch a tensor select (torch.where over both masks), so the whole block is one graph."""
import os

import torch
import torch.nn.functional as F

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
tol = {} if dtype == torch.float32 else {"atol": 3e-2, "rtol": 3e-2}


class Attention(torch.nn.Module):
    def __init__(self, dim=256, heads=16, branchless=True):
        super().__init__()
        self.heads, self.branchless = heads, branchless
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
        by_median = scores < scores.median(dim=-1, keepdim=True).values
        by_mean = scores < scores.mean(dim=-1, keepdim=True)
        if self.branchless:
            mask = torch.where(scores.mean() > 0, by_median, by_mean)
        else:  # the eager reference with the Python branch
            mask = by_median if scores.mean() > 0 else by_mean
        attn = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, d))


torch.manual_seed(0)
model = Attention().to(device=device, dtype=dtype)
reference = Attention(branchless=False).to(device=device, dtype=dtype)
reference.load_state_dict(model.state_dict())
x = torch.randn(2, 197, 256, device=device, dtype=dtype, requires_grad=True)
out = torch.compile(model, fullgraph=True)(x)
ref = reference(x)
torch.testing.assert_close(out, ref, **tol)
(g,) = torch.autograd.grad(out.float().sum(), x)
(g_ref,) = torch.autograd.grad(ref.float().sum(), x)
torch.testing.assert_close(g, g_ref, **tol)
print("branchless masked attention compiled in one graph matches eager")
