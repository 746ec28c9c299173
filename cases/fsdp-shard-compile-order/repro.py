"""FSDP2: compile the model first, then fully_shard it, then train 3 steps; losses vs an unsharded model.

Run: torchrun --standalone --nproc-per-node=2 repro.py   (plain `python repro.py` launches that itself)
"""
import os
import sys

import torch

if "RANK" not in os.environ:  # plain `python script.py`: start 2 ranks through torchrun
    from torch.distributed.run import main as torchrun

    sys.exit(torchrun(["--standalone", "--nproc-per-node=2", os.path.abspath(__file__)]))

import torch.distributed as dist
from torch._dynamo.utils import counters

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
rank = int(os.environ["RANK"])
dist.init_process_group("nccl" if device == "cuda" else "gloo")
if device == "cuda":
    torch.cuda.set_device(rank)
    device = f"cuda:{rank}"


class Net(torch.nn.Module):
    """A user-defined module: Dynamo compiles its forward (an nn.Sequential's forward is torch's own code, and under
    fully_shard it compiled no graph at all, which tests nothing)."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(32, 64), torch.nn.Linear(64, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def make_model():
    torch.manual_seed(0)
    return Net().to(device, dtype)


def train(model, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    torch.manual_seed(1)  # the same data on every rank: sharded and unsharded training must agree
    losses = []
    for _ in range(steps):
        x = torch.randn(16, 32, device=device, dtype=dtype)
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses

from torch.distributed.fsdp import fully_shard

reference = train(make_model())
model = make_model()
compiled = torch.compile(model)  # compile first ...
for layer in (model.a, model.b):
    fully_shard(layer)
fully_shard(model)  # ... then shard (the order the article warns about)
losses = train(compiled)
if not counters["stats"]["unique_graphs"]:  # nothing compiled: the order was not tested at all
    raise RuntimeError("torch.compile compiled no graph of the sharded model: nothing to compare")
torch.testing.assert_close(torch.tensor(losses), torch.tensor(reference), rtol=1e-4, atol=1e-5)
print(f"rank {rank}: compile-then-shard trains like the unsharded model: {losses}")
dist.destroy_process_group()
