"""KV cache for incremental decoding: per layer, the keys and values of every token seen so far.

Keys are stored after QK-norm and RoPE (each token rotated once, at its own absolute position), so a step only
computes its new tokens. Every position is kept, also on sliding-window layers: attention masks by absolute
position, which keeps windows, sinks and soft-caps exact at the cost of memory on windowed layers.
"""

from __future__ import annotations

import torch


class KVCache:
    """Grows by concatenation; `reorder` follows beam search's choice of parent sequences."""

    def __init__(self) -> None:
        self.keys: dict[int, torch.Tensor] = {}  # layer → (B, Hkv, S, D)
        self.values: dict[int, torch.Tensor] = {}

    @property
    def seq_len(self) -> int:
        """Tokens already cached (the absolute position of the next token)."""
        return next(iter(self.keys.values())).shape[2] if self.keys else 0

    def update(self, layer: int, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append this step's keys/values (B, Hkv, T, D) of `layer`; return all of them (B, Hkv, S, D)."""
        if layer in self.keys:
            keys = torch.cat((self.keys[layer], keys), dim=2)
            values = torch.cat((self.values[layer], values), dim=2)
        self.keys[layer], self.values[layer] = keys, values
        return keys, values

    def reorder(self, rows: torch.Tensor) -> None:
        """Keep batch rows `rows` (in that order) in every layer, e.g. the surviving beams' parents."""
        for layer in self.keys:
            self.keys[layer] = self.keys[layer].index_select(0, rows)
            self.values[layer] = self.values[layer].index_select(0, rows)
