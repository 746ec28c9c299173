"""ResNet (transformers ResNetModel, 2 stages of basic blocks)."""
import torch

FAMILY, SOURCE = "vision", "transformers"


def build():
    from transformers import ResNetConfig, ResNetModel

    cfg = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")
    return ResNetModel(cfg), (torch.randn(2, 3, 32, 32),)
