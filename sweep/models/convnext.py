"""ConvNeXt (transformers ConvNextModel, tiny config)."""
import torch

FAMILY, SOURCE = "vision", "transformers"


def build():
    from transformers import ConvNextConfig, ConvNextModel

    cfg = ConvNextConfig(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2, drop_path_rate=0.0)
    return ConvNextModel(cfg), (torch.randn(2, 3, 32, 32),)
