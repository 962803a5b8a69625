"""The decision benchmark (issue 25): does a small proxy make the largest rung's architecture decisions?

Twelve binary decisions from the reference texts, each a ladder of four widths under μP, its base width the
smallest, where each arm's LR is tuned and from where it is carried up unchanged (μP's promise); three seeds a
cell; the largest rung is the reference the smaller ones are judged against (`harness decisions`). Every
decision is compared at equal parameters (`match="params"`, the MLP hidden size solved): depth against width
needs it, and it keeps a switch that saves parameters (GQA, tying) from also shrinking the model.

Two stages, both ordinary sweeps, run in order by `harness decisions --run` (docs/decisions.md):

1. this module's `ablation`, sweep `decisions`: every arm of every decision at the smallest rung, at each LR of
   `LRS` (each arm's best LR is the project's rule: lowest mean ℓ over seeds, a divergence counted as ℓ₀);
2. per decision, `ladder_ablation(name, lrs)`, sweep `decisions.<name>`: its two arms at every rung, each at the
   LR its arm was given; the smallest rung's cells are the tuning sweep's cells at that LR (same configs, same
   run keys), so they are adopted, not trained again.

The rung sizes are `WIDTHS` and `TOKENS`; sized so that the whole benchmark runs in about an hour with two
workers on a 2-core CPU. On a GPU cluster change the rungs alone (e.g. widths 256–2048 and tokens from a
tokens-per-parameter rule): every other choice (decisions, μP with the smallest width as base, the tuning
rule, seeds) stays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from experiments import Ablation, grid, ladder
from experiments.plan.naming import BASE_ARM, arm_name
from harness.presets import tiny

WIDTHS = (48, 72, 96, 144)  # d_model of each rung; the first is μP's base width, where the LRs are tuned
TOKENS = (150_000, 230_000, 340_000, 480_000)  # tokens every cell of a rung trains (floored to whole steps)
LRS = tuple(2.0**-k for k in range(10, 5, -1))  # the grid tuned at the smallest rung, one step ×2
SEEDS = 3
# Untied embeddings: tied, the tiny model sat on the unigram plateau for a seed-dependent while (4 seeds at the
# smallest width, 300k tokens: 4.14–4.63 nats tied, 3.70–3.86 untied), which buried every other decision in seed noise.
BASE = tiny(vocab_size=512, d_model=WIDTHS[0], n_layers=4, n_heads=4, n_kv_heads=4, max_seq_len=64,
            tie_embeddings=False, parametrization="mup", mup_base_width=WIDTHS[0])
TRAIN = dict(batch_size=16, seq_len=64, warmup_steps=20, val_every=100, val_seqs=128, probe_every=50,
             checkpoint_every=1000)
SWEEP = "decisions"  # the tuning sweep; a decision's ladder is sweep `decisions.<name>`


@dataclass(frozen=True)
class Decision:
    """A binary choice: the arm the modern recipe takes (`choice`) against the `alternative`, each a grid point
    of switches that differ from `BASE` (`{}`: the base itself), with the labels tables show."""

    name: str
    question: str
    choice: Mapping[str, Any]
    alternative: Mapping[str, Any]
    labels: tuple[str, str]

    @property
    def points(self) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """(choice, alternative)."""
        return self.choice, self.alternative

    @property
    def arms(self) -> tuple[str, str]:
        """The two arms' names, as every sweep of the benchmark stores them (before a ladder's `@<rung>`)."""
        return arm_name(self.choice, {}), arm_name(self.alternative, {})

    @property
    def sweep(self) -> str:
        """The name of this decision's ladder sweep."""
        return f"{SWEEP}.{self.name}"


DECISIONS = (
    Decision("norm", "RMSNorm or LayerNorm?", {}, {"norm": "layernorm"}, ("RMSNorm", "LayerNorm")),
    Decision("post_norm", "Pre-LN or Post-LN?", {}, {"norm_position": "post"}, ("pre-LN", "post-LN")),
    Decision("sandwich_norm", "Pre-LN or sandwich norms (Gemma 2)?", {}, {"norm_position": "sandwich"},
             ("pre-LN", "sandwich")),
    Decision("activation", "SwiGLU or GELU at equal parameters?", {}, {"mlp": "gelu"}, ("SwiGLU", "GELU")),
    Decision("gqa", "Multi-head attention or GQA with one KV head per four query heads?", {}, {"n_kv_heads": 1},
             ("MHA", "GQA 4:1")),
    Decision("qk_norm", "QK-norm or none?", {"qk_norm": "rmsnorm"}, {}, ("QK-norm", "no QK-norm")),
    Decision("qk_norm_vs_softcap", "QK-norm or an attention-logit soft-cap (Gemma 2's 50)?", {"qk_norm": "rmsnorm"},
             {"attn_softcap": 50.0}, ("QK-norm", "soft-cap 50")),
    Decision("z_loss", "z-loss (PaLM's 1e-4) or none?", {"z_loss": 1e-4}, {}, ("z-loss", "no z-loss")),
    Decision("tied", "Untied or tied embeddings?", {}, {"tie_embeddings": True}, ("untied", "tied")),
    Decision("positions", "RoPE or no positional encoding (NoPE)?", {}, {"positions": "nope"}, ("RoPE", "NoPE")),
    Decision("bias", "No biases (Llama) or biases everywhere (GPT-2)?", {}, {"bias": "all"}, ("no bias", "bias")),
    Decision("depth", "At equal parameters, 4 layers or 8 thinner ones (a narrower MLP)?", {}, {"n_layers": 8},
             ("4 layers", "8 layers")),
)


def decision(name: str) -> Decision:
    """The decision called `name` (KeyError naming the known ones)."""
    found = {d.name: d for d in DECISIONS}
    if name not in found:
        raise KeyError(f"no decision {name!r}; decisions: {', '.join(found)}")
    return found[name]


def arm_points() -> dict[str, Mapping[str, Any]]:
    """Every arm of the benchmark once, by name (the base first): what the tuning sweep runs."""
    points: dict[str, Mapping[str, Any]] = {BASE_ARM: {}}
    for d in DECISIONS:
        points.update({name: point for name, point in zip(d.arms, d.points) if name not in points})
    return points


def _labels() -> dict[str, str]:
    """arm → a label, from the first decision that names it."""
    labels: dict[str, str] = {}
    for d in DECISIONS:
        for name, label in zip(d.arms, d.labels):
            labels.setdefault(name, label)
    return labels


def _union(points) -> Any:
    """The grid of exactly these points, in order."""
    found = grid(**points[0])
    for point in points[1:]:
        found = found + grid(**point)
    return found


def tuning_ablation() -> Ablation:
    """Stage 1: every arm at the smallest rung × every LR of `LRS` × `SEEDS`, at equal parameters. Its steps are the
    ladder's floor of the smallest rung's tokens over a step's, given as steps (not as a token budget) so that a
    `--set steps=N` smoke run of the library is short."""
    points = arm_points()
    steps = TOKENS[0] // (TRAIN["batch_size"] * TRAIN["seq_len"])
    return Ablation(
        SWEEP, "At the smallest rung of the decision benchmark, which learning rate does each arm want?", base=BASE,
        grid=_union(list(points.values())), lrs=list(LRS), seeds=SEEDS, match="params", solve="d_ff",
        train={**TRAIN, "steps": steps}, arms=_labels(),
    )


def _carried(d: Decision, lrs: Mapping[str, float]):
    """exclude= of a decision's ladder: keeps each arm at its own LR only."""
    specific = sorted(zip(d.arms, d.points), key=lambda arm: -len(arm[1]))  # the base ({}) matches every point

    def excluded(point: Mapping[str, Any]) -> bool:
        name = next(name for name, arm in specific if all(point.get(k) == v for k, v in arm.items()))
        return not math.isclose(point["lr"], lrs[name], rel_tol=1e-9)

    return excluded


def ladder_ablation(name: str, lrs: Mapping[str, float]) -> Ablation:
    """Stage 2: decision `name`'s two arms on the ladder of `WIDTHS`, each at its LR in `lrs` (arm → LR, the best
    of the tuning sweep) at every rung. KeyError for an unknown decision or an arm without an LR."""
    d = decision(name)
    missing = [arm for arm in d.arms if arm not in lrs]
    if missing:
        raise KeyError(f"decision {name!r}: no LR for arm {', '.join(missing)}")
    return Ablation(
        d.sweep, f"{d.question.removesuffix('?')}: from which rung does the proxy decide as the largest one does?",
        base=BASE, grid=_union(list(d.points)), seeds=SEEDS, match="params", solve="d_ff", train=TRAIN,
        ladder=ladder(d_model=list(WIDTHS), tokens=list(TOKENS), lrs=sorted({lrs[arm] for arm in d.arms})),
        exclude=_carried(d, lrs), baseline=dict(d.choice) or None, arms=dict(zip(d.arms, d.labels)),
    )


ablation = tuning_ablation()
