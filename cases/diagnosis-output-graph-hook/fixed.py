"""The supported ways to see what Dynamo captured: a backend gets the GraphModule; explain() lists graph breaks."""
import torch


captured = []


def keep_graph(gm: torch.fx.GraphModule, example_inputs):
    captured.append(gm.print_readable(print_output=False))
    return gm.forward


def f(x):
    y = torch.relu(x) * 2
    print("a graph break")  # print() splits the graph
    return y.sum()


torch.compile(f, backend=keep_graph)(torch.randn(4))
explanation = torch._dynamo.explain(f)(torch.randn(4))
print(captured[0])
print(f"graphs: {explanation.graph_count}, breaks: {explanation.graph_break_count}")
assert captured and "relu" in captured[0]
assert explanation.graph_break_count == 1
print("graph IR text captured and graph breaks explained")
