"""Fix: compile the forward only; AOTAutograd compiles the backward graph and DDP hooks all-reduce the grads."""
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


reference = train(DDP(make_model()))
model = DDP(make_model())
train(torch.compile(model))
same_params(reference.module, model.module, "compiled forward, AOT backward")
print(f"rank {rank}: compiled forward with AOTAutograd backward matches plain DDP")
dist.destroy_process_group()
