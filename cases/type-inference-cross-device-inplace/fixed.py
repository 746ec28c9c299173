"""Fix: move the operand to the accumulator's device explicitly before the in-place op."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cuda")


def accumulate(acc_cpu, delta_gpu):
    acc_cpu.add_((delta_gpu * 2).to(acc_cpu.device))
    return acc_cpu.sum()


acc_e, acc_c = torch.zeros(4, 4), torch.zeros(4, 4)
delta = torch.ones(4, 4, device=device)
torch.testing.assert_close(torch.compile(accumulate, fullgraph=True)(acc_c, delta), accumulate(acc_e, delta))
torch.testing.assert_close(acc_c, acc_e)
print("explicit device move: compiled matches eager")
