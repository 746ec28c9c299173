"""DDP(compile(m)) without dynamic=True on batch sizes 16, 24, 40: counts the graphs Dynamo compiled.

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
from torch.nn.parallel import DistributedDataParallel as DDP

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
rank = int(os.environ["RANK"])
dist.init_process_group("nccl" if device == "cuda" else "gloo")
if device == "cuda":
    torch.cuda.set_device(rank)
    device = f"cuda:{rank}"


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 8)).to(device=device, dtype=dtype)


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


from torch._dynamo.utils import counters

reference = train(DDP(make_model()), steps=3, batches=(16, 24, 40))
model = DDP(torch.compile(make_model()))
train(model, steps=3, batches=(16, 24, 40))
same_params(reference.module, model.module, "DDP(compile(m))")
graphs = counters["stats"]["unique_graphs"]
print(f"rank {rank}: {graphs} graphs compiled for 3 batch sizes")
assert graphs == 1, f"recompiled: {graphs} graphs for 3 batch sizes"
dist.destroy_process_group()
