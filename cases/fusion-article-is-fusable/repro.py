"""The article's is_fusable(node), verbatim, applied to a symbolically traced module with in-place ops.

It should reject the in-place add_/mul_ nodes and accept the out-of-place ones (its stated purpose).
Run: python repro.py
"""
import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

torch.manual_seed(0)  # the same data every run: the verdict never depends on the draw


def is_fusable(node: torch.fx.Node) -> bool:  # the article's code, verbatim
    return (node.op == "call_function" and
            not any(hasattr(getattr(torch, n), "inplace") for n in ["add", "mul"]) and  # avoid inplace aliasing
            node.meta.get("tensor_meta") is not None)  # missing shape metadata disables fusion


class Block(torch.nn.Module):
    def forward(self, x, y):
        a = torch.add(x, y)
        b = torch.mul(a, 2.0)
        torch.relu_(b)  # in-place torch function: the article wants this rejected
        b.mul_(y)  # in-place method
        return torch.relu(b)


gm = torch.fx.symbolic_trace(Block())
ShapeProp(gm).propagate(torch.randn(4, 4), torch.randn(4, 4))  # fill tensor_meta, so only the in-place test decides
verdicts = {n.name: is_fusable(n) for n in gm.graph.nodes if n.op in ("call_function", "call_method")}
print("is_fusable:", verdicts)
inplace = [n.name for n in gm.graph.nodes if getattr(n.target, "__name__", str(n.target)).endswith("_")]
wrongly_accepted = [name for name in inplace if verdicts[name]]
assert not wrongly_accepted, f"in-place nodes accepted as fusable: {wrongly_accepted}"
assert verdicts["add"] and verdicts["mul"], "out-of-place nodes rejected"
print("is_fusable separates in-place from out-of-place nodes")
