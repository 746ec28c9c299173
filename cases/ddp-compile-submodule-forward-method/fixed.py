"""Fix: call the submodule (self.linear(x)), not its .forward method.

Run: torchrun --standalone --nproc-per-node=2 repro.py   (plain `python repro.py` launches that itself)
"""
import os
import sys

import torch

if "RANK" not in os.environ:  # plain `python script.py`: start 2 ranks through torchrun
    from torch.distributed.run import main as torchrun

    sys.exit(torchrun(["--standalone", "--nproc-per-node=2", os.path.abspath(__file__)]))

import torch.distributed as dist

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
rank = int(os.environ["RANK"])
dist.init_process_group("nccl" if device == "cuda" else "gloo")
if device == "cuda":
    torch.cuda.set_device(rank)
    device = f"cuda:{rank}"

from torch.nn.parallel import DistributedDataParallel as DDP


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(32, 32)

    def forward(self, x):
        return self.linear(x)


torch.manual_seed(0)
model = DDP(Model().to(device))
x = torch.randn(4, 32, device=device)
torch.testing.assert_close(torch.compile(model)(x), model(x))
print(f"rank {rank}: compiled DDP matches eager")
dist.destroy_process_group()
