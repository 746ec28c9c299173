"""Is P2P access enabled between GPU pairs, and what bandwidth does a device-to-device copy get?

Prints the measured GB/s for each pair; fails (AssertionError) if a pair lacks peer access or if the direct copy is
slower than copying through pinned host memory. Run: python repro.py   (needs 2+ GPUs)
"""
import time

import torch

SIZE = 1 << 30  # 1 GiB


def gbps(fn, nbytes, repeat=5):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    torch.cuda.synchronize()
    return nbytes * repeat / (time.perf_counter() - start) / 1e9


n = torch.cuda.device_count()
assert n >= 2, f"needs 2 GPUs, found {n}"
problems = []
for src in range(n):
    for dst in range(n):
        if src == dst:
            continue
        peer = torch.cuda.can_device_access_peer(src, dst)
        a = torch.empty(SIZE, dtype=torch.uint8, device=f"cuda:{src}")
        b = torch.empty(SIZE, dtype=torch.uint8, device=f"cuda:{dst}")
        host = torch.empty(SIZE, dtype=torch.uint8, pin_memory=True)
        direct = gbps(lambda: b.copy_(a, non_blocking=True), SIZE)
        staged = gbps(lambda: (host.copy_(a, non_blocking=True), b.copy_(host, non_blocking=True)), SIZE)
        print(f"cuda:{src} -> cuda:{dst}: peer access {peer}, direct {direct:.1f} GB/s, via host {staged:.1f} GB/s")
        if not peer:
            problems.append(f"no P2P access {src}->{dst}")
        elif direct < staged:
            problems.append(f"P2P copy {src}->{dst} slower than via host ({direct:.1f} < {staged:.1f} GB/s)")
        del a, b, host
assert not problems, "; ".join(problems)
print("P2P enabled between every pair, direct copies faster than host-staged ones")
