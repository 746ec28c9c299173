"""Pin each GPU's staging buffer from a thread bound to that GPU, then measure again (per-GPU buffers)."""
import time

import torch

SIZE = 1 << 30
rates = {}
for d in range(torch.cuda.device_count()):
    with torch.cuda.device(d):
        host = torch.empty(SIZE, dtype=torch.uint8, pin_memory=True)  # allocated while this GPU is current
        dev = torch.empty(SIZE, dtype=torch.uint8, device=f"cuda:{d}")
        dev.copy_(host, non_blocking=True)
        torch.cuda.synchronize(d)
        start = time.perf_counter()
        for _ in range(5):
            dev.copy_(host, non_blocking=True)
        torch.cuda.synchronize(d)
        rates[d] = 5 * SIZE / (time.perf_counter() - start) / 1e9
        print(f"host -> cuda:{d}: {rates[d]:.1f} GB/s")
        del dev, host
assert min(rates.values()) > 1.0, rates
print("every GPU reachable from its own pinned buffer")
