"""Mixtral-style sparse mixture of experts (transformers MixtralForCausalLM, 4 experts, top-2), tiny config."""
import torch

FAMILY, SOURCE = "moe", "transformers"


def build():
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
                        max_position_embeddings=64, use_cache=False)
    return MixtralForCausalLM(cfg), (torch.randint(0, 512, (2, 24)),)
