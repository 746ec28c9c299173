"""nn.TransformerEncoder (post-norm, 2 layers) with a padding mask."""
import torch
from torch import nn

FAMILY, SOURCE = "language", "self-contained"


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x, pad):
        return self.enc(x, src_key_padding_mask=pad)


def build():
    pad = torch.zeros(2, 20, dtype=torch.bool)
    pad[1, 15:] = True
    return Encoder(), (torch.randn(2, 20, 64), pad)
