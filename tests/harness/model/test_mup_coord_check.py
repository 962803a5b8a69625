"""The coordinate check of the `mup` package (Yang et al. 2022, Tensor Programs V, §D): train models of widths
64 … 512 for a few Adam steps on one fixed batch and read every layer's activation size after them. Under μP
it is flat in width (the log–log slope of RMS against width within ±0.1); under the standard parametrization
the updates of the hidden layers grow with width and so do the activations.

The batch is Zipfian, like text: the infinite-width limit keeps the batch fixed, and on uniformly random tokens
a batch shares almost no gradient direction, so at width 64 the random-sign part of an Adam update is as large
as its aligned part and inflates the narrowest model's activations (a finite-width effect that vanishes with
width, and with data that has structure). μP is averaged over three seeds; the standard parametrization's
growth needs one. The narrowest model, where μP is the standard one, serves both."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from harness.config import TrainConfig
from harness.config.model import ModelConfig
from harness.model import build_model
from harness.train.optim import build_optimizer

WIDTHS = (64, 128, 256, 512)
SEEDS = {"mup": 3, "standard": 1}
STEPS = 3
VOCAB, BATCH, SEQ = 64, 4, 32
TRAIN = TrainConfig(lr=3e-3, warmup_steps=0, schedule="constant", min_lr=0.0, weight_decay=0.0, grad_clip=None)


def _batch(seed: int) -> torch.Tensor:
    """(BATCH, SEQ + 1) tokens drawn with probability ∝ 1/rank^1.5."""
    probs = torch.arange(1, VOCAB + 1, dtype=torch.float64) ** -1.5
    generator = torch.Generator().manual_seed(1000 + seed)
    return torch.multinomial(probs, BATCH * (SEQ + 1), replacement=True, generator=generator).view(BATCH, SEQ + 1)


def _layers(model: torch.nn.Module) -> dict[str, torch.nn.Module]:
    """The modules whose output is read: the embedding, and each block's attention, MLP and output."""
    modules = {"embedding": model.tok_emb}
    for i, block in enumerate(model.layers):
        modules |= {f"layer {i} attention": block.attn, f"layer {i} mlp": block.mlp, f"layer {i} output": block}
    return modules


def coordinates(parametrization: str, width: int, seed: int) -> dict[str, float]:
    """RMS of every read activation and of the logits, in the forward pass after STEPS Adam steps."""
    mup = {"parametrization": "mup", "mup_base_width": WIDTHS[0]} if parametrization == "mup" else {}
    cfg = ModelConfig(vocab_size=VOCAB, d_model=width, n_layers=2, n_heads=4, max_seq_len=SEQ, **mup)
    torch.manual_seed(seed)
    model = build_model(cfg)
    optimizer, _ = build_optimizer(model, TRAIN)
    inputs, targets = _batch(seed)[:, :-1], _batch(seed)[:, 1:]
    for _ in range(STEPS):
        loss = F.cross_entropy(model(inputs).flatten(0, 1), targets.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    sizes = {}
    hooks = [module.register_forward_hook(lambda m, args, out, name=name: sizes.update({name: out.pow(2).mean()}))
             for name, module in _layers(model).items()]
    with torch.no_grad():
        sizes["logits"] = model(inputs).pow(2).mean()
    for hook in hooks:
        hook.remove()
    return {name: math.sqrt(size.item()) for name, size in sizes.items()}


def _slopes(runs: dict[int, list[dict[str, float]]]) -> dict[str, float]:
    """Per activation, the least-squares slope of log(mean RMS over seeds) on log(width)."""
    sizes = {name: [np.mean([run[name] for run in runs[w]]) for w in WIDTHS] for name in runs[WIDTHS[0]][0]}
    return {name: np.polyfit(np.log(WIDTHS), np.log(size), 1)[0] for name, size in sizes.items()}


@pytest.fixture(scope="module")
def slopes() -> dict[str, dict[str, float]]:
    """Per parametrization, every activation's slope."""
    narrowest = [coordinates("mup", WIDTHS[0], seed) for seed in range(SEEDS["mup"])]
    return {p: _slopes({WIDTHS[0]: narrowest[:seeds]} | {w: [coordinates(p, w, seed) for seed in range(seeds)]
                                                          for w in WIDTHS[1:]})
            for p, seeds in SEEDS.items()}


def test_the_narrowest_model_is_the_standard_one():
    """The shared width-64 runs stand for both: at its base width μP is the standard model exactly."""
    assert coordinates("mup", WIDTHS[0], 0) == coordinates("standard", WIDTHS[0], 0)


@pytest.mark.slow
def test_under_mup_every_activation_keeps_its_size_as_the_width_grows(slopes):
    flat = {name: round(slope, 3) for name, slope in slopes["mup"].items() if abs(slope) > 0.1}
    assert not flat, f"μP activations that change with width (log–log slope): {flat}"
    assert len(slopes["mup"]) == 1 + 3 * 2 + 1


def test_under_the_standard_parametrization_every_updated_layer_grows_with_width(slopes):
    grown = {name: slope for name, slope in slopes["standard"].items() if name != "embedding"}
    assert all(slope > 0.3 for slope in grown.values()), grown
