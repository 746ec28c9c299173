"""Fix: no in-place state buffer; states are carried as new tensors per step (lists), then stacked."""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
LAYERS, HIDDEN, STEPS = 3, 64, 12
torch.backends.cudnn.allow_tf32 = False  # nn.LSTM on CUDA runs cuDNN, TF32 by default: make the reference true fp32


def stacked_lstm(x, h0, c0, weights):
    hs, cs = [], []
    for layer, (w_ih, w_hh, b_ih, b_hh) in enumerate(weights):
        h, c, outputs = h0[layer], c0[layer], []
        for t in range(x.shape[0]):
            i, f, g, o = (x[t] @ w_ih.t() + b_ih + h @ w_hh.t() + b_hh).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        x = torch.stack(outputs)
        hs.append(h)
        cs.append(c)
    return x, torch.stack(hs), torch.stack(cs)


torch.manual_seed(0)
ref = torch.nn.LSTM(32, HIDDEN, num_layers=LAYERS).to(device=device, dtype=dtype)
weights = [tuple(getattr(ref, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
           for k in range(LAYERS)]
x = torch.randn(STEPS, 4, 32, device=device, dtype=dtype, requires_grad=True)
h0 = torch.zeros(LAYERS, 4, HIDDEN, device=device, dtype=dtype)
c0 = torch.zeros(LAYERS, 4, HIDDEN, device=device, dtype=dtype)
out, h, c = torch.compile(stacked_lstm, fullgraph=True)(x, h0, c0, weights)
out_ref, (h_ref, c_ref) = ref(x, (h0, c0))
torch.testing.assert_close(out, out_ref, atol=1e-4, rtol=1e-4)
torch.testing.assert_close(c, c_ref, atol=1e-4, rtol=1e-4)
(g,) = torch.autograd.grad(out.sum(), x)
(g_ref,) = torch.autograd.grad(out_ref.sum(), x)
torch.testing.assert_close(g, g_ref, atol=1e-4, rtol=1e-4)
print("compiled functional stacked LSTM matches nn.LSTM")
