"""Swin Transformer (transformers SwinModel, tiny config). Named by the article."""
import torch

FAMILY, SOURCE = "vision", "transformers"


def build():
    from transformers import SwinConfig, SwinModel

    cfg = SwinConfig(image_size=64, patch_size=4, embed_dim=32, depths=[1, 1], num_heads=[2, 4], window_size=4,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, drop_path_rate=0.0)
    return SwinModel(cfg), (torch.randn(2, 3, 64, 64),)
