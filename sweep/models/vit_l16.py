"""ViT-L/16 layout (patch 16, pre-norm encoder) at tiny width (transformers ViTModel). Named by the article."""
import torch

FAMILY, SOURCE = "vision", "transformers"


def build():
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(image_size=64, patch_size=16, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=128, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return ViTModel(cfg), (torch.randn(2, 3, 64, 64),)
