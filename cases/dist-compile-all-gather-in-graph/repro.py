"""An embedding, then dist.all_gather inside a custom autograd.Function (a tensor-parallel "gather" region), compiled
with fullgraph=True; output and embedding gradient against eager.

Issue: https://github.com/pytorch/pytorch/issues/123041 ("torch.* op returned non-Tensor bool call_method
is_complex" from dist.all_gather under torch.compile). The issue says its failure disappears without the embedding
or without the custom autograd.Function, so both are here; fullgraph=True makes a graph break an error instead of a
silent fall-back to eager. The Function gathers each rank's slice along the last dim in forward and keeps this
rank's slice of the gradient in backward (the usual tensor-parallel pair).

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
world = dist.get_world_size()


class GatherFromRanks(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        parts = [torch.empty_like(x) for _ in range(world)]
        dist.all_gather(parts, x.contiguous())
        return torch.cat(parts, dim=-1)

    @staticmethod
    def backward(ctx, grad):
        return grad.chunk(world, dim=-1)[rank].contiguous()


torch.manual_seed(rank)  # each rank holds its own slice of the embedding
embedding = torch.nn.Embedding(32, 8).to(device=device, dtype=dtype)


def forward(ids):
    return GatherFromRanks.apply(embedding(ids)).pow(2).sum()


ids = torch.randint(0, 32, (4, 5), device=device)
out = torch.compile(forward, fullgraph=True)(ids)
out.backward()
grad = embedding.weight.grad.clone()
embedding.weight.grad = None
ref = forward(ids)
ref.backward()
torch.testing.assert_close(out, ref)
torch.testing.assert_close(grad, embedding.weight.grad)
print(f"rank {rank}: compiled embedding + all_gather autograd.Function matches eager (output and gradient)")
dist.destroy_process_group()
