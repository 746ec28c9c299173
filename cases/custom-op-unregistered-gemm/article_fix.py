"""The article's fix: register the op with `inductor_register_custom_op`. Looks the call up where it could live."""
import torch
import torch._inductor
import torch._inductor.lowering
import torch.library

homes = [torch, torch.library, torch._inductor, torch._inductor.lowering]
found = [h.__name__ for h in homes if hasattr(h, "inductor_register_custom_op")]
if not found:
    raise AttributeError("inductor_register_custom_op: no such function in torch, torch.library or torch._inductor")
print("found inductor_register_custom_op in", found)
