"""GPT-2 decoder with LM head (transformers GPT2LMHeadModel, tiny config)."""
import torch

FAMILY, SOURCE = "language", "transformers"


def build():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=512, n_positions=64, n_embd=64, n_layer=2, n_head=4, resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False, bos_token_id=0,
                     eos_token_id=0)
    return GPT2LMHeadModel(cfg), (torch.randint(0, 512, (2, 24)),)
