"""The verdict of each arm against its baseline, from its `analysis.pairs.Pairs` (the rules of docs/analysis.md).

Every test in a table is one Holm family: each row's loss test and, where it has one, its divergence test.
Then, first match wins:

1. `less stable` / `more stable`: the divergence test resolves (Holm p < α) that the arm diverges more / less
   often than the baseline on the matched seeds; a divergence outweighs any loss difference;
2. `no CI`: the loss test has no p (fewer than two surviving pairs, or zero spread from fewer than three);
3. `negligible`: both sides diverged on as many matched seeds, and the difference's CI lies inside ±min_effect;
4. `better` / `worse`: the loss test resolves it (Holm p < α), and the side it favours diverged on no more
   matched seeds than the other: survivors of the side that diverged more are a selection, possibly of exactly
   the seeds where it did well, so their loss is no evidence in its favour (the survivorship null);
5. `within noise` otherwise.
"""

from __future__ import annotations

import numpy as np

from analysis.pairs import Pairs
from analysis.stats import ALPHA, holm

ORDER = ("less stable", "more stable", "no CI", "negligible", "better", "worse")
OTHERWISE = "within noise"


def holm_family(pairs: Pairs) -> tuple[np.ndarray, np.ndarray]:
    """Holm-adjusted (loss p, divergence p) of every row: one family over the rows (the last axis)."""
    rows = pairs.loss.p.shape[-1]
    adjusted = holm(np.concatenate([pairs.loss.p, pairs.p_stability], axis=-1))
    return adjusted[..., :rows], adjusted[..., rows:]


def verdicts(pairs: Pairs, p_holm: np.ndarray, p_stability_holm: np.ndarray, min_effect: float) -> np.ndarray:
    """The verdict of each row (the module docstring's rules), as an array of strings."""
    delta = pairs.loss.delta
    more, fewer = pairs.arm_diverged > pairs.baseline_diverged, pairs.arm_diverged < pairs.baseline_diverged
    stability_resolved = p_stability_holm < ALPHA
    loss_resolved = p_holm < ALPHA
    conditions = [
        stability_resolved & more,
        stability_resolved & fewer,
        np.isnan(pairs.loss.p),
        ~more & ~fewer & (-min_effect < delta.low) & (delta.high < min_effect),
        loss_resolved & (delta.mean < 0) & ~more,
        loss_resolved & (delta.mean > 0) & ~fewer,
    ]
    return np.select(conditions, np.array(ORDER, dtype=object), default=OTHERWISE)
