"""The article's FSDP configuration dict (mixed_precision_policy renamed mixed_precision, the name FSDP1 takes), then
torch.compile; 3 steps vs an unsharded model.

Run: torchrun --standalone --nproc-per-node=2 repro.py   (plain `python repro.py` launches that itself; needs GPUs)
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


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).to(device, dtype)


def train(model, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    torch.manual_seed(1)  # the same data on every rank: sharded and unsharded training must agree
    losses = []
    for _ in range(steps):
        x = torch.randn(16, 32, device=device, dtype=dtype)
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses

from torch.distributed.fsdp import CPUOffload, MixedPrecision, ShardingStrategy
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

mp_policy = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)
fsdp_config = dict(  # the article's dict
    sharding_strategy=ShardingStrategy.FULL_SHARD,  # Zero-3 equivalent
    cpu_offload=CPUOffload(offload_params=True),  # parameter offload
    mixed_precision=mp_policy,  # the same as single-GPU (the article: mixed_precision_policy=)
)
reference = train(make_model())
model = FSDP(make_model().cpu(), device_id=torch.cuda.current_device(), **fsdp_config)
losses = train(torch.compile(model))
torch.testing.assert_close(torch.tensor(losses), torch.tensor(reference), rtol=5e-2, atol=5e-3)
print(f"rank {rank}: the article's FSDP config under compile trains like the unsharded model: {losses}")
dist.destroy_process_group()
