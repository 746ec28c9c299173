"""DDP with find_unused_parameters=True and an unused parameter, compiled, vs plain DDP, over 5 training steps.

Run: torchrun --standalone --nproc-per-node=2 repro.py   (plain `python repro.py` launches that itself)
"""
import copy
import os
import sys

import torch

if "RANK" not in os.environ:
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
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(32, 64)
        self.b = torch.nn.Linear(64, 8)
        self.unused = torch.nn.Linear(64, 8)  # never used in forward: DDP must mark it ready itself

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


torch.manual_seed(0)
base = Net().to(device=device, dtype=dtype)
plain = DDP(copy.deepcopy(base), find_unused_parameters=True)
compiled_ddp = DDP(copy.deepcopy(base), find_unused_parameters=True)
compiled = torch.compile(compiled_ddp)
opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (plain, compiled_ddp)]
torch.manual_seed(1 + rank)
for step in range(5):
    x = torch.randn(16, 32, device=device, dtype=dtype)
    for model, opt in zip((plain, compiled), opts):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
    for (name, p), q in zip(plain.module.named_parameters(), compiled_ddp.module.parameters()):
        if p.grad is None:
            assert q.grad is None, f"step {step}: {name} has a grad only under compile"
        else:
            torch.testing.assert_close(q.grad, p.grad, msg=lambda m, n=name, s=step: f"step {s} grad {n}: {m}")
    for opt in opts:
        opt.step()
for (name, p), q in zip(plain.module.named_parameters(), compiled_ddp.module.parameters()):
    torch.testing.assert_close(q, p, msg=lambda m, n=name: f"param {n}: {m}")
print(f"rank {rank}: compiled DDP(find_unused_parameters=True) matches plain DDP over 5 steps")
dist.destroy_process_group()
