"""The article's capture_failed_graph(g: OutputGraph) applied to the OutputGraph of a real compilation.

Run: python repro.py
"""
import torch
from torch._dynamo.output_graph import OutputGraph


def capture_failed_graph(g: OutputGraph):  # the article's hook, verbatim
    g.debug_print()  # print the Graph IR as text
    return g.graph.dump()  # return the GraphModule IR string


seen = []


def grab_output_graph(gm, example_inputs):
    # Dynamo's OutputGraph is reachable from a backend through the tracing context.
    tx = torch._guards.TracingContext.try_get()
    seen.append(getattr(tx, "fake_mode", None))
    import torch._dynamo.symbolic_convert as sc

    seen.append(sc.InstructionTranslator.current_tx().output)
    return gm.forward


def f(x):
    return torch.relu(x) * 2


torch.compile(f, backend=grab_output_graph)(torch.randn(4))
output_graph = seen[-1]
assert isinstance(output_graph, OutputGraph), type(output_graph)
print(capture_failed_graph(output_graph))
