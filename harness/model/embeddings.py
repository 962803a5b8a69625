"""The token table and the untied LM head: torch's nn.Embedding and nn.Linear, declared in
`harness.model.spec.embeddings` and initialized from that declaration."""

from __future__ import annotations

from torch import nn

from harness.config.model import ModelConfig
from harness.model.component import TorchLayerComponent
from harness.model.spec.params import Params


class TokenEmbedding(TorchLayerComponent, nn.Embedding):
    """`tok_emb`: token id → (d,) vector."""

    def __init__(self, cfg: ModelConfig, layer: None, params: Params) -> None:
        n_tokens, width = params["weight"].shape
        super().__init__(n_tokens, width)
        self.declare(params)


class LMHead(TorchLayerComponent, nn.Linear):
    """`lm_head` of an untied model: (B, T, d) → logits (B, T, V), no bias."""

    def __init__(self, cfg: ModelConfig, layer: None, params: Params) -> None:
        vocab_size, d_model = params["weight"].shape
        super().__init__(d_model, vocab_size, bias=False)
        self.declare(params)
