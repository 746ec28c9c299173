"""Fix: build the DTensor outside the compiled region and pass it in; the compiled function sees a DTensor input.

Run: torchrun --standalone --nproc-per-node=2 fixed.py   (plain `python fixed.py` launches that itself)
"""
import os
import sys

import torch
import torch.distributed as dist

if "RANK" not in os.environ:
    from torch.distributed.run import main as torchrun

    sys.exit(torchrun(["--standalone", "--nproc-per-node=2", os.path.abspath(__file__)]))

from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
if device == "cuda":
    torch.cuda.set_device(rank)
mesh = init_device_mesh(device, (world,))


def scale(dt):
    return (dt * 2).redistribute(dt.device_mesh, [Replicate()]).to_local()


torch.manual_seed(rank)
local = torch.randn(4, 8, device=device, dtype=dtype)
dt = DTensor.from_local(local, mesh, [Shard(0)], run_check=False)
out = torch.compile(scale, fullgraph=True)(dt)
torch.testing.assert_close(out, scale(dt))
print(f"rank {rank}: compiled function on a DTensor input matches eager")
dist.destroy_process_group()
