"""Fix: torch._dynamo.config.optimize_ddp = False, so DDPOptimizer does not split the compiled graphs at DDP's
bucket boundaries.

The crash is in compiling those split partitions: a partition whose output is a Python float (the stochastic-depth
rate, 1 - p, once the block code recompiles for the second rate and takes p as an input) reaches
FakifiedOutWrapper, which expects graph nodes. Without the split each graph is compiled whole and DDP all-reduces
the gradients through its own hooks after the backward (less overlap of communication with the backward, the same
gradients). The compiled step's gradients are checked against an eager DDP step from the same weights and seed
(inductor's fallback_random draws the stochastic-depth masks from the eager RNG, so both drop the same rows).
"""
import copy
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))

import tempfile

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

torch._dynamo.config.optimize_ddp = False
torch._inductor.config.fallback_random = True


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


def step_grads(model, x):
    torch.manual_seed(1)  # the same stochastic-depth masks in both steps
    model(x).sum().backward()
    return [p.grad.clone() for p in model.parameters()]


with tempfile.TemporaryDirectory() as tmp:  # the file store deletes its file when the group ends
    dist.init_process_group("gloo", init_method=f"file://{os.path.join(tmp, 'store')}", rank=0, world_size=1)
    torch.manual_seed(0)
    net = Model().to(device)
    reference = copy.deepcopy(net)
    x = torch.randn(8, 512, device=device)
    compiled = step_grads(torch.compile(DDP(net, bucket_cap_mb=1)), x)
    eager = step_grads(DDP(reference, bucket_cap_mb=1), x)
    for got, want in zip(compiled, eager):
        torch.testing.assert_close(got, want)
    print("one compiled DDP training step (optimize_ddp=False) matches eager DDP")
    dist.destroy_process_group()
