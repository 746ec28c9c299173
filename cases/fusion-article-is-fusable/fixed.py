"""A check that does what the article's is_fusable intends: reject in-place targets, require tensor_meta."""
import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp


def is_inplace(node: torch.fx.Node) -> bool:
    if node.op == "call_method":
        return node.target.endswith("_") and not node.target.endswith("__")
    if node.op == "call_function":
        name = getattr(node.target, "__name__", "")
        if name.endswith("_") and not name.endswith("__"):  # torch.relu_, torch.add_, ...
            return True
        schema = getattr(node.target, "_schema", None)  # aten overloads: a written-to alias means in place
        return bool(schema and any(a.alias_info and a.alias_info.is_write for a in schema.arguments))
    return False


def is_fusable(node: torch.fx.Node) -> bool:
    return (node.op in ("call_function", "call_method") and not is_inplace(node)
            and node.meta.get("tensor_meta") is not None)


class Block(torch.nn.Module):
    def forward(self, x, y):
        a = torch.add(x, y)
        b = torch.mul(a, 2.0)
        torch.relu_(b)
        b.mul_(y)
        return torch.relu(b)


gm = torch.fx.symbolic_trace(Block())
ShapeProp(gm).propagate(torch.randn(4, 4), torch.randn(4, 4))
verdicts = {n.name: is_fusable(n) for n in gm.graph.nodes if n.op in ("call_function", "call_method")}
print("is_fusable:", verdicts)
assert [k for k, v in verdicts.items() if not v] == ["relu_", "mul_"], verdicts
# The aten-level graph (what inductor fuses) has no in-place ops left at all: functionalization removes them.
from torch.fx.experimental.proxy_tensor import make_fx
from torch.func import functionalize

aten = make_fx(functionalize(Block()))(torch.randn(4, 4), torch.randn(4, 4))
assert not any(is_inplace(n) for n in aten.graph.nodes), "functionalized graph still has in-place ops"
print("in-place nodes rejected; the functionalized aten graph has none")
