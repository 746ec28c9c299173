"""Fix: gather with the traceable functional collective (torch.distributed._functional_collectives.all_gather_tensor)
instead of dist.all_gather into a list.

dist.all_gather is a c10d call that writes into Python-list outputs and queries tensor properties (is_complex)
that Dynamo cannot put in a graph; the functional collective returns a new tensor and is a graph op, so the whole
function compiles (fullgraph=True). The result is checked against the eager dist.all_gather.

Run: torchrun --standalone --nproc-per-node=2 fixed.py   (plain `python fixed.py` launches that itself)
"""
import os
import sys

import torch

if "RANK" not in os.environ:  # plain `python script.py`: start 2 ranks through torchrun
    from torch.distributed.run import main as torchrun

    sys.exit(torchrun(["--standalone", "--nproc-per-node=2", os.path.abspath(__file__)]))

import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
rank = int(os.environ["RANK"])
dist.init_process_group("nccl" if device == "cuda" else "gloo")
if device == "cuda":
    torch.cuda.set_device(rank)
    device = f"cuda:{rank}"


def gather_eager(x):
    parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x * 2)
    return torch.cat(parts) + 1


def gather_functional(x):
    return funcol.all_gather_tensor(x * 2, 0, dist.group.WORLD) + 1


x = torch.full((4,), float(rank), device=device)
torch.testing.assert_close(torch.compile(gather_functional, fullgraph=True)(x), gather_eager(x))
print(f"rank {rank}: compiled functional all_gather matches eager dist.all_gather")
dist.destroy_process_group()
