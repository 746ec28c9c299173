"""DTensor.from_local() called inside a compiled function, on a 2-rank device mesh.

Run: torchrun --standalone --nproc-per-node=2 repro.py   (plain `python repro.py` launches that itself)
"""
import os
import sys

import torch
import torch.distributed as dist

if "RANK" not in os.environ:  # plain `python repro.py`: start 2 ranks through torchrun
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


def scale_shards(local, mesh):
    dt = DTensor.from_local(local, mesh, [Shard(0)], run_check=False)
    return (dt * 2).redistribute(mesh, [Replicate()]).to_local()


torch.manual_seed(rank)
local = torch.randn(4, 8, device=device, dtype=dtype)
compiled = torch.compile(scale_shards, fullgraph=True)
out = compiled(local, mesh)
torch.testing.assert_close(out, scale_shards(local, mesh))
print(f"rank {rank}: compiled DTensor.from_local matches eager, shape {tuple(out.shape)}")
dist.destroy_process_group()
