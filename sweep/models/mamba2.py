"""Mamba-2 (transformers Mamba2Model, tiny config, torch fallback path). Named by the article."""
import torch

FAMILY, SOURCE = "language", "transformers"


def build():
    from transformers import Mamba2Config, Mamba2Model

    cfg = Mamba2Config(vocab_size=256, hidden_size=64, state_size=16, num_hidden_layers=2, num_heads=4, head_dim=32,
                       expand=2, n_groups=1, chunk_size=16)
    return Mamba2Model(cfg), (torch.randint(0, 256, (2, 32)),)
