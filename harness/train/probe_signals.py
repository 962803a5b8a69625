"""The probe-step signals of the model on a fixed batch: attention-logit growth and output-logit divergence.

- max attention logit per layer and head: exact, `harness.model.probe.max_attention_logits` (q·kᵀ·scale after
  QK-norm and RoPE, causal-masked, before the soft-cap; the capped value too when a cap is configured);
- q and k RMS per layer and head, from the same q/k the attention used (captured after QK-norm and RoPE);
- output logits (after the final soft-cap, when configured, i.e. what the loss sees): max |z|, standard
  deviation, and the mean log partition function log Z (what z-loss pushes towards 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from harness.model.probe import max_attention_logits
from harness.model.transformer import Transformer


@dataclass(frozen=True)
class ProbeSignals:
    """Signals of one probe, on the device: per-layer grids and the output-logit scalars."""

    attn_logit_max: torch.Tensor  # (L, H), before any soft-cap
    attn_logit_max_capped: torch.Tensor | None  # (L, H), None when there is no attention soft-cap
    q_rms: torch.Tensor  # (L, H)
    k_rms: torch.Tensor  # (L, Hkv)
    output_logit_max_abs: torch.Tensor  # ()
    output_logit_std: torch.Tensor  # ()
    output_log_z_mean: torch.Tensor  # ()


def _head_rms(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, D) → (H,) root mean square per head."""
    return x.float().square().mean(dim=(0, 2, 3)).sqrt()


@torch.no_grad()
def probe_signals(model: Transformer, input_ids: torch.Tensor) -> ProbeSignals:
    """Measure `model` on `input_ids` (B, T): two forwards, one inside the exact max-logit probe, one capturing q/k."""
    attention = max_attention_logits(model, input_ids)
    model.capture_qk(True)
    try:
        logits = model(input_ids).float()  # (B, T, V)
        captured = [attn.captured() for attn in model.attentions]
        q_rms = torch.stack([_head_rms(q) for q, _ in captured])  # (L, H)
        k_rms = torch.stack([_head_rms(k) for _, k in captured])  # (L, Hkv)
    finally:
        model.capture_qk(False)
    return ProbeSignals(
        attn_logit_max=attention.raw,
        attn_logit_max_capped=attention.capped,
        q_rms=q_rms,
        k_rms=k_rms,
        output_logit_max_abs=logits.abs().amax(),
        output_logit_std=logits.std(),
        output_log_z_mean=torch.logsumexp(logits, dim=-1).mean(),
    )
