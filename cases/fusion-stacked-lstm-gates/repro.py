"""A 3-layer LSTM written gate by gate (the cell state buffer is updated in place each step), compiled.

Outputs and final states are checked against the same function in eager (inference: the in-place state buffer is
what the article blames, and eager autograd itself rejects in-place updates of saved tensors).
Run: python repro.py
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
LAYERS, HIDDEN, STEPS = 3, 64, 12


def stacked_lstm(x, h, c, weights):
    for layer, (w_ih, w_hh, b_ih, b_hh) in enumerate(weights):
        outputs = []
        for t in range(x.shape[0]):
            gates = x[t] @ w_ih.t() + b_ih + h[layer] @ w_hh.t() + b_hh
            i, f, g, o = gates.chunk(4, dim=-1)
            c_new = torch.sigmoid(f) * c[layer] + torch.sigmoid(i) * torch.tanh(g)
            h[layer] = torch.sigmoid(o) * torch.tanh(c_new)
            c[layer] = c_new  # the state buffer is reused across time steps
            outputs.append(h[layer])  # a view of the state buffer: eager semantics alias it
        x = torch.stack(outputs)
    return x, h, c


torch.manual_seed(0)
ref = torch.nn.LSTM(32, HIDDEN, num_layers=LAYERS).to(device=device, dtype=dtype)
weights = [tuple(getattr(ref, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
           for k in range(LAYERS)]
x = torch.randn(STEPS, 4, 32, device=device, dtype=dtype)
h0 = torch.zeros(LAYERS, 4, HIDDEN, device=device, dtype=dtype)
c0 = torch.zeros(LAYERS, 4, HIDDEN, device=device, dtype=dtype)
with torch.no_grad():
    out, h, c = torch.compile(stacked_lstm)(x, h0.clone(), c0.clone(), weights)
    out_ref, h_ref, c_ref = stacked_lstm(x, h0.clone(), c0.clone(), weights)
torch.testing.assert_close(out, out_ref, atol=1e-4, rtol=1e-4)
torch.testing.assert_close(h, h_ref, atol=1e-4, rtol=1e-4)
torch.testing.assert_close(c, c_ref, atol=1e-4, rtol=1e-4)
print("compiled gate-level stacked LSTM matches eager")
