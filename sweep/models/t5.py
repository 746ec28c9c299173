"""T5 encoder-decoder (transformers T5ForConditionalGeneration, tiny config)."""
import torch

FAMILY, SOURCE = "language", "transformers"


class T5Step(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, decoder_input_ids):
        return self.model(input_ids=input_ids, decoder_input_ids=decoder_input_ids).logits


def build():
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(vocab_size=512, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, dropout_rate=0.0,
                   use_cache=False)
    return T5Step(T5ForConditionalGeneration(cfg)), (torch.randint(0, 512, (2, 16)), torch.randint(0, 512, (2, 8)))
