"""AdamW parameter groups (decay / no decay, and each parametrization's per-layer LR), Wortsman's independent
decay, and the LR schedule."""

from __future__ import annotations

import math

import torch
from torch import nn

from harness.config.train import TrainConfig
from harness.model.spec import decoder
from harness.model.transformer import Transformer

EMBEDDING_PARAMETERS = ("tok_emb.weight", "pos_emb.weight")


def decays(name: str, param: nn.Parameter) -> bool:
    """Whether weight decay applies: matrices do; embeddings, norm gains, biases and sink logits do not.

    Everything with fewer than 2 dimensions is a norm gain, a bias or a per-head sink; the embedding tables
    are matrices but are excluded by name (a tied LM head shares the token table, so it is excluded too).
    """
    return param.ndim >= 2 and name not in EMBEDDING_PARAMETERS


def lr_multipliers(model: nn.Module) -> dict[str, float]:
    """A Transformer's factor on the peak LR per parameter name, from its parametrization (all 1 under the
    standard one; under μP 1/m for hidden matrices); any other module trains every parameter at the LR given."""
    return decoder.lr_multipliers(model.cfg) if isinstance(model, Transformer) else {}


def parameter_groups(model: nn.Module, cfg: TrainConfig) -> list[dict]:
    """AdamW groups by weight decay (`decays`, unless `no_decay_embeddings_norms_biases` is off) and by LR factor
    (`lr_multipliers`). A group's `lr` is cfg.lr × its factor; its `weight_decay`, converted for `cfg.wd_mode`
    (see `TrainConfig.wd_mode`), is divided by the factor, so every step decays a weight by what wd_mode says
    whatever its LR (the `mup` package's MuAdam: width scales the Adam step, not the decay). Groups at the peak
    LR come first (the logged `lr` is the first group's), decayed before not."""
    decay_value = cfg.weight_decay if cfg.wd_mode == "coupled" else cfg.weight_decay / cfg.lr
    factors = lr_multipliers(model)
    groups: dict[tuple[float, bool], list[nn.Parameter]] = {}
    for name, param in model.named_parameters():
        if param.requires_grad:
            decayed = decays(name, param) or not cfg.no_decay_embeddings_norms_biases
            groups.setdefault((factors.get(name, 1.0), decayed), []).append(param)
    order = sorted(groups, key=lambda key: (key[0] != 1.0, not key[1]))
    return [{"params": groups[factor, decayed], "lr": cfg.lr * factor,
             "weight_decay": decay_value / factor if decayed else 0.0} for factor, decayed in order]


def lr_multiplier(step: int, cfg: TrainConfig) -> float:
    """LR of 0-based optimizer step `step` as a fraction of the peak: linear warmup, then the decay to min_lr.

    Warmup reaches the peak at its last step ((step + 1) / warmup_steps), so no step trains at LR 0. The decay
    runs over the remaining steps warmup_steps … steps - 1, from the peak on the first to min_lr on the last
    (a single decay step is the last one, so it trains at min_lr); later steps stay at min_lr.
    """
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    if cfg.schedule == "constant":
        return 1.0
    last = cfg.steps - 1 - cfg.warmup_steps  # the last step's distance from the first decay step
    progress = 1.0 if last <= 0 else min(1.0, (step - cfg.warmup_steps) / last)
    floor = cfg.min_lr / cfg.lr
    if cfg.schedule == "cosine":
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))
    return floor + (1 - floor) * (1 - progress)


def build_optimizer(model: nn.Module, cfg: TrainConfig) -> tuple[torch.optim.AdamW, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW over `parameter_groups` and its per-step LambdaLR schedule."""
    optimizer = torch.optim.AdamW(
        parameter_groups(model, cfg), lr=cfg.lr, betas=(cfg.adam_beta1, cfg.adam_beta2), eps=cfg.adam_eps
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_multiplier(step, cfg))
    return optimizer, scheduler
