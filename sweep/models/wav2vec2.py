"""wav2vec 2.0 (transformers Wav2Vec2Model: conv feature encoder + transformer) on raw audio, tiny config."""
import torch

FAMILY, SOURCE = "speech", "transformers"


def build():
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    cfg = Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                         conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                         num_conv_pos_embedding_groups=4, hidden_dropout=0.0, attention_dropout=0.0,
                         activation_dropout=0.0, feat_proj_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0,
                         do_stable_layer_norm=True)
    return Wav2Vec2Model(cfg), (torch.randn(2, 1600),)
