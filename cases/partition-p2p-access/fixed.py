"""Place communicating ranks on peer-connected GPUs: list the pairs with P2P access and check a copy between them."""
import torch

n = torch.cuda.device_count()
pairs = [(i, j) for i in range(n) for j in range(n) if i != j and torch.cuda.can_device_access_peer(i, j)]
print(f"{len(pairs)} of {n * (n - 1)} GPU pairs have peer access: {pairs}")
assert pairs, "no GPU pair has peer access: keep communicating ranks on one GPU or use host-staged collectives"
src, dst = pairs[0]
a = torch.randn(1 << 20, device=f"cuda:{src}")
torch.testing.assert_close(a.to(f"cuda:{dst}").cpu(), a.cpu())
print(f"copy cuda:{src} -> cuda:{dst} is exact")
