"""Workaround (not the upstream fix): compile with dynamic=False, so each input shape gets its own static graph.

The failure came from the recompilation after the first call: the second shape made the row dim dynamic, and the
dynamic-shape graph for the DTensor matmul broke for (2, 1). dynamic=False never makes a dim symbolic, so that path
is avoided rather than fixed: every shape is traced like the first call was (the issue is closed; whether the
dynamic path works is what repro.py shows). Each compiled result is checked against the local x @ y.

Run: torchrun --standalone --nproc-per-node=2 fixed.py   (plain `python fixed.py` launches that itself)
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

from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, distribute_tensor

mesh = init_device_mesh(torch.device(device).type, (dist.get_world_size(),))
matmul = torch.compile(lambda a, b: a @ b, dynamic=False)
for rows in (1, 2, 64):
    x, y = torch.ones(rows, 1, device=device), torch.ones(1, 1, device=device)
    got = matmul(distribute_tensor(x, mesh, [Replicate()]), distribute_tensor(y, mesh, [Replicate()]))
    torch.testing.assert_close(got.full_tensor(), x @ y)
print(f"rank {rank}: compiled (dynamic=False) DTensor matmul matches for every shape")
dist.destroy_process_group()
