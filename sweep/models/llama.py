"""LLaMA-style decoder (transformers LlamaForCausalLM: RMSNorm, RoPE, SwiGLU, GQA), tiny config."""
import torch

FAMILY, SOURCE = "language", "transformers"


def build():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, use_cache=False)
    return LlamaForCausalLM(cfg), (torch.randint(0, 512, (2, 24)),)
