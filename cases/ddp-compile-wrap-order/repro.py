"""compile(DDP(m)) and DDP(compile(m)), 3 SGD steps each, parameters compared with plain DDP.

Run: torchrun --standalone --nproc-per-node=2 repro.py   (plain `python repro.py` launches that itself)
"""
import copy
import os
import sys

import torch

if "RANK" not in os.environ:  # plain `python script.py`: start 2 ranks through torchrun
    from torch.distributed.run import main as torchrun

    sys.exit(torchrun(["--standalone", "--nproc-per-node=2", os.path.abspath(__file__)]))

import torch.distributed as dist
from torch._dynamo.utils import counters
from torch.nn.parallel import DistributedDataParallel as DDP

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
rank = int(os.environ["RANK"])
dist.init_process_group("nccl" if device == "cuda" else "gloo")
if device == "cuda":
    torch.cuda.set_device(rank)
    device = f"cuda:{rank}"


class Net(torch.nn.Module):
    """A user-defined module: Dynamo compiles its forward. (An nn.Sequential inside DDP compiled no graph at all:
    its forward is torch's own code, and a check of an empty graph list proves nothing.)"""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = torch.nn.Linear(32, 1024), torch.nn.Linear(1024, 1024), torch.nn.Linear(1024, 8)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


# Several buckets: the model's ~4.3 MB of float32 gradients fill five of 1 MB (DDP's first bucket is 1 MB and
# DDPOptimizer wants no later bucket smaller), so there are several sync points to line up; with DDP's default 25 MB
# buckets a small model is one bucket, synced at the very end, and alignment holds trivially.
BUCKET_MB = 1


def make_model():
    torch.manual_seed(0)
    return Net().to(device=device, dtype=dtype)


def train(model, steps=3, batches=(16,)):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    torch.manual_seed(1 + rank)
    for step in range(steps):
        x = torch.randn(batches[step % len(batches)], 32, device=device, dtype=dtype)
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    return model


def same_params(a, b, what):
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        torch.testing.assert_close(q, p, msg=lambda m, n=name: f"{what}: param {n}: {m}")


reference = train(DDP(make_model(), bucket_cap_mb=BUCKET_MB))
outer = DDP(make_model(), bucket_cap_mb=BUCKET_MB)
train(torch.compile(outer))  # compile(DDP(m))
if not counters["stats"]["unique_graphs"]:  # nothing compiled: compile(DDP(m)) was not tested at all
    raise RuntimeError("compile(DDP(m)) compiled no graph: nothing to compare")
inner = DDP(torch.compile(make_model()), bucket_cap_mb=BUCKET_MB)  # DDP(compile(m))
train(inner)
same_params(reference.module, outer.module, "compile(DDP(m))")
same_params(reference.module, inner.module, "DDP(compile(m))")
print(f"rank {rank}: both wrapping orders match plain DDP")
dist.destroy_process_group()
