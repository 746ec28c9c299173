"""Peak memory of a training step: single device, DDP and FSDP2 (fully_shard) on 2 GPUs, as ratios.

Run: torchrun --standalone --nproc-per-node=2 repro.py   (plain `python repro.py` launches that itself; needs GPUs)
"""
import os
import sys

import torch

if "RANK" not in os.environ:
    from torch.distributed.run import main as torchrun

    sys.exit(torchrun(["--standalone", "--nproc-per-node=2", os.path.abspath(__file__)]))

import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel as DDP

rank = int(os.environ["RANK"])
torch.cuda.set_device(rank)
dist.init_process_group("nccl")
DIM, LAYERS = 2048, 12  # about 100M parameters


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(DIM, 2 * DIM), torch.nn.GELU(),
                                                     torch.nn.Linear(2 * DIM, DIM)) for _ in range(LAYERS)]).cuda()


def peak_gib(model):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(2):
        x = torch.randn(8, 128, DIM, device="cuda")
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / 2**30


single = peak_gib(make_model())
torch.cuda.empty_cache()
ddp = peak_gib(DDP(make_model()))
torch.cuda.empty_cache()
model = make_model()
for block in model:
    fully_shard(block)
fsdp = peak_gib(fully_shard(model))
print(f"rank {rank}: peak GiB single {single:.2f}, DDP {ddp:.2f}, FSDP {fsdp:.2f}; "
      f"ratios DDP/single {ddp / single:.2f} (article 1.00), FSDP/DDP {fsdp / ddp:.2f} (article 0.33)")
assert fsdp / ddp <= 0.75, f"FSDP/DDP peak memory ratio {fsdp / ddp:.2f} > 0.75"
dist.destroy_process_group()
