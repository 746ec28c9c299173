"""With DDPOptimizer: graphs are split at bucket boundaries, none holds a collective, and
training matches plain DDP (the all-reduce overlaps backward through DDP hooks)."""
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


class Net(torch.nn.Module):
    """A user-defined module: Dynamo compiles its forward. (An nn.Sequential inside DDP compiled no graph at all:
    its forward is torch's own code, and a check of an empty graph list proves nothing.)"""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = torch.nn.Linear(32, 64), torch.nn.Linear(64, 64), torch.nn.Linear(64, 8)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


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


from torch._dynamo.backends.common import aot_autograd

torch._dynamo.config.optimize_ddp = True
forward_graphs = []


def keep(gm, example_inputs):
    forward_graphs.append(gm)
    return gm.forward


reference = train(DDP(make_model()))
model = DDP(make_model())
train(torch.compile(model, backend=aot_autograd(fw_compiler=keep)))
same_params(reference.module, model.module, "compile(DDP(m)) with DDPOptimizer")
ops = {str(n.target) for g in forward_graphs for n in g.graph.nodes if n.op == "call_function"}
if not forward_graphs:
    raise RuntimeError("compile(DDP(m)) compiled no forward graph: nothing to inspect")
assert not [o for o in ops if "all_reduce" in o or "c10d" in o], ops
print(f"rank {rank}: {len(forward_graphs)} forward graph(s), no collectives, matches plain DDP")
dist.destroy_process_group()
