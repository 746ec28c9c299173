"""nn.Embedding parallelized with RowwiseParallel, compiled, called on a replicated index DTensor.

Issue: https://github.com/pytorch/pytorch/issues/159843

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

from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, distribute_tensor
from torch.distributed.tensor.parallel import RowwiseParallel, parallelize_module

mesh = init_device_mesh(torch.device(device).type, (dist.get_world_size(),))
torch.manual_seed(0)
emb = torch.nn.Embedding(16, 8, device=device)
reference = emb.weight.detach().clone()
sharded = parallelize_module(emb, mesh, RowwiseParallel(input_layouts=Replicate()))
idx = torch.arange(16, device=device).view(4, 4)
out = torch.compile(sharded)(distribute_tensor(idx, mesh, [Replicate()]))
out = out.full_tensor() if hasattr(out, "full_tensor") else out
torch.testing.assert_close(out, reference[idx])
print(f"rank {rank}: compiled sharded embedding matches")
dist.destroy_process_group()
