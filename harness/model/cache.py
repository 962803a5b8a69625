"""KV cache for incremental decoding: per layer, the keys and values the next tokens can still attend to.

Keys are stored after QK-norm and RoPE (each token rotated once, at its own absolute position), so a step only
computes its new tokens. A global layer keeps every position; a sliding-window layer keeps only the last
window - 1 (all the next token can see besides itself), so its memory stays flat however long the decode.
Attention masks by relative position within the returned keys (which always end at the newest token), so
windows, sinks and soft-caps stay exact.
"""

from __future__ import annotations

import torch


class KVCache:
    """Grows by concatenation (trimmed to the window on windowed layers); `reorder` follows beam search."""

    def __init__(self) -> None:
        self.keys: dict[int, torch.Tensor] = {}  # layer → (B, Hkv, S_layer, D)
        self.values: dict[int, torch.Tensor] = {}
        self.seen: dict[int, int] = {}  # layer → tokens it has been fed (absolute position of the next one)

    @property
    def seq_len(self) -> int:
        """Tokens already cached (the absolute position of the next token)."""
        return next(iter(self.seen.values())) if self.seen else 0

    def update(
        self, layer: int, keys: torch.Tensor, values: torch.Tensor, window: int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append this step's keys/values (B, Hkv, T, D) of `layer`; return what this step attends to
        (B, Hkv, S, D): everything kept plus the new ones. With a `window`, keep only the last window - 1."""
        self.seen[layer] = self.seen.get(layer, 0) + keys.shape[2]
        if layer in self.keys:
            keys = torch.cat((self.keys[layer], keys), dim=2)
            values = torch.cat((self.values[layer], values), dim=2)
        # A view of the last window - 1: it pins this step's concatenation (window - 1 + T rows) until the
        # next step replaces it, so memory stays bounded without a copy.
        start = 0 if window is None else max(0, keys.shape[2] - (window - 1))
        self.keys[layer], self.values[layer] = keys[:, :, start:], values[:, :, start:]
        return keys, values

    def reorder(self, rows: torch.Tensor) -> None:
        """Keep batch rows `rows` (in that order) in every layer, e.g. the surviving beams' parents."""
        for layer in self.keys:
            self.keys[layer] = self.keys[layer].index_select(0, rows)
            self.values[layer] = self.values[layer].index_select(0, rows)
