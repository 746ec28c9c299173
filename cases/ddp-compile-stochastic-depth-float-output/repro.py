"""DDP (one gloo rank) over compiled blocks that use row-wise stochastic depth, with a graph break between
blocks, trained one step.

Issue: https://github.com/pytorch/pytorch/issues/196227 (the issue uses torchvision's StochasticDepth; this
writes the same row-mode computation inline). The blocks' drop rates differ (0.0, 0.1), so the block code
recompiles for the second rate, which Dynamo then treats as an input. Each 512x512 layer holds about 1 MiB of
parameters, so with bucket_cap_mb=1 DDPOptimizer splits every compiled graph into several partitions, the code path
of the issue (a bucket cap below DDP's 1 MiB first bucket is refused by DDPOptimizer before that).
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

import tempfile

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def stochastic_depth(x, p, training):
    if not training or p == 0.0:
        return x
    survival = 1.0 - p
    noise = torch.empty([x.shape[0]] + [1] * (x.ndim - 1), dtype=x.dtype, device=x.device).bernoulli_(survival)
    return x * noise.div_(survival)


class Block(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.fc1, self.fc2, self.p = torch.nn.Linear(512, 512), torch.nn.Linear(512, 512), p

    def forward(self, x):
        x = x + stochastic_depth(self.fc1(x), self.p, self.training)
        return x + stochastic_depth(self.fc2(x), self.p, self.training)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(0.0), Block(0.1)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
            torch._dynamo.graph_break()
        return x


with tempfile.TemporaryDirectory() as tmp:  # the file store deletes its file when the group ends
    dist.init_process_group("gloo", init_method=f"file://{os.path.join(tmp, 'store')}", rank=0, world_size=1)
    torch.manual_seed(0)
    model = torch.compile(DDP(Model().to(device), bucket_cap_mb=1))
    x = torch.randn(8, 512, device=device)
    model(x).sum().backward()
    print("one compiled DDP training step ran")
    dist.destroy_process_group()
