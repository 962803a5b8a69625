"""Position encodings: rotary (RoPE, Su et al. 2021), learned absolute (GPT-2) and none (NoPE).

Every encoding has one interface, `forward(x, offset) -> (x, rotation)` for the tokens at positions offset,
offset + 1, …: learned positions add to the embeddings, RoPE returns the (cos, sin) tables that attention
applies to q and k, NoPE does neither.
"""

from __future__ import annotations

import torch
from torch import nn

Rotation = tuple[torch.Tensor, torch.Tensor]  # (cos, sin), each (T, head_dim)


def token_positions(x: torch.Tensor, offset: int) -> torch.Tensor:
    """Absolute positions (T,) of the tokens of x (B, T, ·) that follow `offset` cached ones."""
    return torch.arange(offset, offset + x.shape[1], device=x.device)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) → (-x2, x1) on the two halves of the last dim: Hugging Face Llama's pairing (i, i + D/2)."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x: torch.Tensor, rotation: Rotation) -> torch.Tensor:
    """Rotate x (B, H, T, D) by the angles of its positions."""
    cos, sin = (t.to(x.dtype) for t in rotation)  # (T, D)
    return x * cos + rotate_half(x) * sin


class RotaryPositions(nn.Module):
    """RoPE tables computed on the fly in float32 (no buffer, so casting the model cannot degrade them)."""

    def __init__(self, head_dim: int, theta: float) -> None:
        super().__init__()
        self.head_dim, self.theta = head_dim, theta

    def rotation(self, positions: torch.Tensor) -> Rotation:
        """(cos, sin), each (T, D), for integer `positions` (T,)."""
        exponents = torch.arange(0, self.head_dim, 2, device=positions.device, dtype=torch.int64).float()
        inv_freq = 1.0 / (self.theta ** (exponents / self.head_dim))  # (D/2,)
        angles = positions.float()[:, None] * inv_freq[None, :]  # (T, D/2)
        angles = torch.cat((angles, angles), dim=-1)  # (T, D)
        return angles.cos(), angles.sin()

    def forward(self, x: torch.Tensor, offset: int) -> tuple[torch.Tensor, Rotation]:
        return x, self.rotation(token_positions(x, offset))

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, theta={self.theta}"


class LearnedPositions(nn.Embedding):
    """A learned vector per absolute position, added to the token embeddings (`pos_emb.weight`)."""

    def forward(self, x: torch.Tensor, offset: int) -> tuple[torch.Tensor, None]:
        end = offset + x.shape[1]
        if end > self.num_embeddings:
            raise ValueError(f"position {end - 1} is beyond learned positions: max_seq_len={self.num_embeddings}")
        return x + super().forward(token_positions(x, offset)), None


class NoPositions(nn.Module):
    """NoPE (Kazemnejad et al. 2023): order comes from the causal mask alone."""

    def forward(self, x: torch.Tensor, offset: int) -> tuple[torch.Tensor, None]:
        return x, None
