"""BERT encoder (transformers BertModel, tiny config)."""
import torch

FAMILY, SOURCE = "language", "transformers"


def build():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return BertModel(cfg), (torch.randint(0, 512, (2, 24)),)
