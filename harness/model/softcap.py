"""Logit soft-capping c·tanh(z/c) (Gemma 2): smooth, monotone, bounded in (-c, c), identity near zero."""

from __future__ import annotations

import torch


def soft_cap(logits: torch.Tensor, cap: float) -> torch.Tensor:
    """c·tanh(logits / c), elementwise."""
    return cap * torch.tanh(logits / cap)
