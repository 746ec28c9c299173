"""Fix: keep the row-wise sharded embedding out of the compiled region (torch.compiler.disable on the module call)
and compile the rest, as per-block compilation in tensor-parallel training leaves the embedding out.

The compile failure is in tracing the sharded embedding itself (its _MaskPartial output redistributed to
Replicate by the module's output hook); run eagerly, the lookup returns the all-reduced output and the computation
after it is compiled. The
compiled result is checked against the same computation on the unsharded weight.

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
from torch.distributed.tensor.parallel import RowwiseParallel, parallelize_module

mesh = init_device_mesh(torch.device(device).type, (dist.get_world_size(),))
torch.manual_seed(0)
emb = torch.nn.Embedding(16, 8, device=device)
reference = emb.weight.detach().clone()
sharded = parallelize_module(emb, mesh, RowwiseParallel(input_layouts=Replicate()))
lookup = torch.compiler.disable(sharded)  # the lookup, with its input/output redistribution hooks, runs eagerly


def model(idx):
    out = lookup(idx)
    out = out.full_tensor() if hasattr(out, "full_tensor") else out
    return torch.nn.functional.layer_norm(out, (8,)) * 2 + 1


idx = torch.arange(16, device=device).view(4, 4)
got = torch.compile(model)(distribute_tensor(idx, mesh, [Replicate()]))
torch.testing.assert_close(got, torch.nn.functional.layer_norm(reference[idx], (8,)) * 2 + 1)
print(f"rank {rank}: eager sharded embedding + compiled rest matches")
dist.destroy_process_group()
