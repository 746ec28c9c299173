"""Fix: gather with the traceable functional collective (torch.distributed._functional_collectives.all_gather_tensor)
inside the same autograd.Function, instead of dist.all_gather into a list.

dist.all_gather is a c10d call that writes into Python-list outputs; the functional collective returns a new tensor
and is a graph op, so the whole function compiles (fullgraph=True). Output and embedding gradient are checked
against the eager dist.all_gather version of repro.py.

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
world = dist.get_world_size()


class GatherEager(torch.autograd.Function):  # repro.py's Function, the eager reference
    @staticmethod
    def forward(ctx, x):
        parts = [torch.empty_like(x) for _ in range(world)]
        dist.all_gather(parts, x.contiguous())
        return torch.cat(parts, dim=-1)

    @staticmethod
    def backward(ctx, grad):
        return grad.chunk(world, dim=-1)[rank].contiguous()


class GatherFunctional(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        gathered = funcol.all_gather_tensor(x.contiguous(), 0, dist.group.WORLD)  # ranks stacked along dim 0
        return torch.cat(gathered.chunk(world, dim=0), dim=-1)

    @staticmethod
    def backward(ctx, grad):
        return grad.chunk(world, dim=-1)[rank].contiguous()


torch.manual_seed(rank)
embedding = torch.nn.Embedding(32, 8).to(device=device, dtype=dtype)
ids = torch.randint(0, 32, (4, 5), device=device)
out = torch.compile(lambda i: GatherFunctional.apply(embedding(i)).pow(2).sum(), fullgraph=True)(ids)
out.backward()
grad = embedding.weight.grad.clone()
embedding.weight.grad = None
ref = GatherEager.apply(embedding(ids)).pow(2).sum()
ref.backward()
torch.testing.assert_close(out, ref)
torch.testing.assert_close(grad, embedding.weight.grad)
print(f"rank {rank}: compiled functional all_gather matches eager dist.all_gather (output and gradient)")
dist.destroy_process_group()
