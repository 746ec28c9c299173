"""Host-to-device copy bandwidth from one pinned host buffer to each GPU; a large spread means NUMA/switch effects.

Run: python repro.py   (needs 2+ GPUs)
"""
import time

import torch

SIZE = 1 << 30
host = torch.empty(SIZE, dtype=torch.uint8, pin_memory=True)
rates = {}
for d in range(torch.cuda.device_count()):
    dev = torch.empty(SIZE, dtype=torch.uint8, device=f"cuda:{d}")
    dev.copy_(host, non_blocking=True)
    torch.cuda.synchronize(d)
    start = time.perf_counter()
    for _ in range(5):
        dev.copy_(host, non_blocking=True)
    torch.cuda.synchronize(d)
    rates[d] = 5 * SIZE / (time.perf_counter() - start) / 1e9
    print(f"host -> cuda:{d}: {rates[d]:.1f} GB/s")
    del dev
slow, fast = min(rates.values()), max(rates.values())
assert slow >= 0.6 * fast, f"bandwidth spread: slowest GPU gets {slow:.1f} GB/s, {slow / fast:.0%} of {fast:.1f}"
print(f"bandwidth even across GPUs: {slow:.1f}-{fast:.1f} GB/s")
