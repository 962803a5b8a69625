"""Position encodings: rotary (RoPE, Su et al. 2021), learned absolute (GPT-2) and none (NoPE).

Every encoding has one interface, `forward(x, offset) -> (x, rotation)` for the tokens at positions offset,
offset + 1, …: learned positions add to the embeddings, RoPE returns the (cos, sin) tables that attention
applies to q and k, NoPE does neither. Declarations: `harness.model.spec.positions`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from harness.config.model import ModelConfig
from harness.model import registry
from harness.model.component import Component, TorchLayerComponent
from harness.model.spec.params import Params

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


def default_inv_freq(cfg: ModelConfig, device: torch.device, theta: float | None = None) -> torch.Tensor:
    """θ^(-2i/D) for the D/2 channel pairs, in float32 (as transformers computes them); θ is `rope_theta`
    unless given."""
    exponents = torch.arange(0, cfg.head_dim, 2, device=device, dtype=torch.int64).float()
    return 1.0 / ((theta or cfg.rope_theta) ** (exponents / cfg.head_dim))  # (D/2,)


def llama3_inv_freq(cfg: ModelConfig, device: torch.device) -> torch.Tensor:
    """Llama 3.1's frequency rescaling (transformers' `_compute_llama3_parameters`): wavelengths longer than
    original_len / low_freq_factor are slowed by `factor`, shorter than original_len / high_freq_factor kept,
    and those in between blend the two smoothly."""
    inv_freq = default_inv_freq(cfg, device)
    factor, low, high = cfg.rope_scaling_factor, cfg.rope_low_freq_factor, cfg.rope_high_freq_factor
    original = cfg.rope_original_max_seq_len
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > original / low, inv_freq / factor, inv_freq)
    smooth = (original / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    is_medium = ~(wavelen < original / high) * ~(wavelen > original / low)
    return torch.where(is_medium, smoothed, scaled)


class RotaryPositions(Component):
    """RoPE tables computed on the fly in float32 (no buffer, so casting the model cannot degrade them).

    With `rope_local_theta` (Gemma 3) the sliding-window layers rotate by their own base, unscaled: the decoder
    hands those layers `local_rotation` and every other layer the `forward` rotation (base `rope_theta`, scaled
    by `rope_type`)."""

    def __init__(self, cfg: ModelConfig, layer: None, params: Params) -> None:
        super().__init__()
        self.cfg = cfg
        self.inv_freq = registry.resolve(registry.ROPE_TYPES[cfg.rope_type])
        self.declare(params)

    def rotation(self, positions: torch.Tensor, local: bool = False) -> Rotation:
        """(cos, sin), each (T, D), for integer `positions` (T,); `local`: by the unscaled `rope_local_theta`."""
        device = positions.device
        inv_freq = (default_inv_freq(self.cfg, device, self.cfg.rope_local_theta) if local
                    else self.inv_freq(self.cfg, device))  # (D/2,)
        angles = positions.float()[:, None] * inv_freq[None, :]  # (T, D/2)
        angles = torch.cat((angles, angles), dim=-1)  # (T, D)
        return angles.cos(), angles.sin()

    def forward(self, x: torch.Tensor, offset: int) -> tuple[torch.Tensor, Rotation]:
        return x, self.rotation(token_positions(x, offset))

    def local_rotation(self, x: torch.Tensor, offset: int) -> Rotation:
        """The sliding-window layers' rotation when `rope_local_theta` is set."""
        return self.rotation(token_positions(x, offset), local=True)

    def extra_repr(self) -> str:
        local = f", local_theta={self.cfg.rope_local_theta}" if self.cfg.rope_local_theta is not None else ""
        return f"head_dim={self.cfg.head_dim}, theta={self.cfg.rope_theta}{local}, rope_type={self.cfg.rope_type}"


class LearnedPositions(TorchLayerComponent, nn.Embedding):
    """A learned vector per absolute position, added to the token embeddings (`pos_emb.weight`)."""

    def __init__(self, cfg: ModelConfig, layer: None, params: Params) -> None:
        n_positions, width = params["weight"].shape
        super().__init__(n_positions, width)
        self.declare(params)

    # Every positions module maps (x, offset) to (x, rotation); the embedding table's own lookup is `super().forward`.
    def forward(self, x: torch.Tensor, offset: int) -> tuple[torch.Tensor, None]:  # type: ignore[override]
        end = offset + x.shape[1]
        if end > self.num_embeddings:
            raise ValueError(f"position {end - 1} is beyond learned positions: max_seq_len={self.num_embeddings}")
        return x + super().forward(token_positions(x, offset)), None


class NoPositions(Component):
    """NoPE (Kazemnejad et al. 2023): order comes from the causal mask alone."""

    def __init__(self, cfg: ModelConfig, layer: None, params: Params) -> None:
        super().__init__()
        self.declare(params)

    def forward(self, x: torch.Tensor, offset: int) -> tuple[torch.Tensor, None]:
        return x, None
