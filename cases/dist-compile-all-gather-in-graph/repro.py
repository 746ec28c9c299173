"""dist.all_gather into a list inside a torch.compile'd function, against the eager result.

Issue: https://github.com/pytorch/pytorch/issues/123041 (the issue's full testcase also has an
embedding and a custom autograd.Function; this is the reduced collective call).

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

def gather(x):
    parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x * 2)
    return torch.cat(parts) + 1


x = torch.full((4,), float(rank), device=device)
torch.testing.assert_close(torch.compile(gather)(x), gather(x))
print(f"rank {rank}: compiled all_gather matches eager")
dist.destroy_process_group()
