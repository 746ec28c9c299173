"""Whisper encoder (transformers WhisperModel's encoder on log-mel features), tiny config."""
import torch

FAMILY, SOURCE = "speech", "transformers"


def build():
    from transformers import WhisperConfig, WhisperModel

    cfg = WhisperConfig(num_mel_bins=16, d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
                        decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=128, max_source_positions=32,
                        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)
    return WhisperModel(cfg).get_encoder(), (torch.randn(2, 16, 64),)
