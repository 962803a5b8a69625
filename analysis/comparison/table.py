"""The comparison table from a sweep's finished cells: per-(arm, lr) means with t-intervals, and against the
baseline at the same LR on matched seeds both the divergences and the loss, with Holm-adjusted verdicts.

A seed's outcome is its completed value or a divergence (a diverged run, or a completed one whose metric is not
finite: `analysis.reading.outcomes`). A searched arm's seed is its best completed trial (the `best_trials` rule; its
trials are different configurations, so one that diverged is a bad configuration, not this seed's fate), and diverged
only when none completed; any other seed with a diverged run is diverged, whatever its other runs did (a retry that
completed does not undo a divergence: the worst case counts). Means are over completed seeds. The pairing, the
tests and the verdict rules are `analysis.comparison.pairs`, `analysis.comparison.verdicts` and
`analysis.comparison.rules`. Lower is better.

No store access here (`analysis.reading.finished` reads the cells): `harness compare` imports this module, and with it
scipy.stats (~1 s), while a child process reads the store.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TypedDict

import numpy as np

from analysis.comparison import stats
from analysis.comparison.bimodal import Split, bimodal_cells
from analysis.comparison.pairs import DIVERGED, Pairs, compare_pairs
from analysis.comparison.row import ComparisonRow, baseline_row
from analysis.comparison.rules import Verdict
from analysis.comparison.verdicts import holm_family, loss_p, verdicts
from analysis.errors import AnalysisError
from analysis.reading.cells import MIN_EFFECT, Cells

# The columns `harness compare` prints, in order (every one a key of `ComparisonRow`).
COLUMNS = [
    "arm", "lr", "seeds", "diverged", "mean", "ci_low", "ci_high",
    "n_pairs", "arm_diverged", "baseline_diverged", "arm_only", "baseline_only", "p_stability", "p_stability_holm",
    "n", "delta", "delta_ci_low", "delta_ci_high", "p", "p_holm", "survivors_only", "verdict", "decided_by",
    "seeds_needed",
]
# Beside COLUMNS in every row, not printed by `harness compare`: matched seeds for 80% power to resolve the
# *observed* difference (seeds_needed plans for min_effect), which the report shows labelled beside it; and the
# order the row's evidence points to, resolved or not: -1 the arm ahead, +1 the baseline, 0 neither (the side
# with more discordant divergences is behind, else the sign of delta) — what a smaller rung "would decide".
OBSERVED = "seeds_needed_observed"
DIRECTION = "direction"
COUNTS = ("n_pairs", "arm_diverged", "baseline_diverged", "arm_only", "baseline_only", "n", "seeds_needed", OBSERVED)


class _Cell(TypedDict):
    seeds: defaultdict[int, list[float]]  # seed → its completed values
    gone: set[int]  # seeds with a divergence
    diverged: int
    searched: bool


def _grouped(cells: Cells) -> dict[tuple, _Cell]:
    """(arm, lr) → {"seeds": {seed: [completed values]}, "gone": {seeds with a divergence}, "diverged": count,
    "searched": bool}."""
    grouped: defaultdict[tuple, _Cell] = defaultdict(
        lambda: _Cell(seeds=defaultdict(list), gone=set(), diverged=0, searched=False))
    for arm, lr, seed, searched, status, value in cells.runs:
        cell = grouped[(arm, lr)]
        cell["searched"] |= searched
        if status == "diverged":
            cell["diverged"] += 1
            cell["gone"].add(seed)
        else:
            cell["seeds"][seed].append(float(value))
    return grouped


def _per_seed(cell: _Cell | None) -> dict:
    """seed → its outcome: a search's best completed trial (DIVERGED when none completed); any other seed DIVERGED
    when one of its runs diverged, else the mean of its runs."""
    if cell is None:
        return {}
    if cell["searched"]:
        outcomes = {seed: DIVERGED for seed in cell["gone"]}
        outcomes.update({seed: float(min(values)) for seed, values in cell["seeds"].items()})
        return outcomes
    outcomes = {seed: float(np.mean(values)) for seed, values in cell["seeds"].items()}
    outcomes.update({seed: DIVERGED for seed in cell["gone"]})
    return outcomes


def _matched(mine: dict, theirs: dict, width: int) -> tuple[list[float], list[float]]:
    """Both sides' outcomes on the seeds both have, padded with NaN (no pair) to `width`."""
    seeds = sorted(set(mine) & set(theirs))
    pad = [math.nan] * (width - len(seeds))
    return [mine[s] for s in seeds] + pad, [theirs[s] for s in seeds] + pad


def comparison_table(cells: Cells, min_effect: float = MIN_EFFECT, robust: bool = False) -> list[ComparisonRow]:
    """One `ComparisonRow` per (arm, lr), the baseline's first; the baseline's pair fields are NaN (None for the
    counts and seeds_needed) and its verdict `Verdict.BASELINE`. `robust`: a loss claim also needs the sign test
    (`analysis.comparison.verdicts`)."""
    if not min_effect > 0:
        raise AnalysisError(f"min_effect={min_effect!r} is invalid: must be a positive number (nats).")
    baseline, grouped = cells.baseline, _grouped(cells)
    order = sorted(grouped, key=lambda key: (key[0] != baseline, key[0], key[1] is None, key[1] or 0.0))
    outcomes = {key: _per_seed(grouped[key]) for key in order}
    rows = []
    for arm, lr in order:
        interval = stats.t_interval([v for v in outcomes[(arm, lr)].values() if v != DIVERGED])
        rows.append(baseline_row(arm, lr, int(interval.n), grouped[(arm, lr)]["diverged"], interval.mean, interval.low,
                                 interval.high))
    compared = [i for i, (arm, _) in enumerate(order) if arm != baseline]
    if compared:
        width = max(len(outcomes[key]) for key in order)
        pairs = [_matched(outcomes[order[i]], outcomes.get((baseline, order[i][1]), {}), width) for i in compared]
        arms, baselines = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
        _fill(rows, compared, compare_pairs(arms, baselines), min_effect, robust)
    return rows


def per_seed_outcomes(cells: Cells) -> dict[tuple, dict]:
    """(arm, lr) → {seed: outcome} (a finite loss or `DIVERGED`), by the module docstring's rule."""
    return {key: _per_seed(cell) for key, cell in _grouped(cells).items()}


def bimodal_splits(cells: Cells) -> dict[tuple, Split]:
    """(arm, lr) → how its completed per-seed outcomes split into two groups, for the cells that do
    (`analysis.comparison.bimodal`; the seed noise pooled over the whole table)."""
    completed = {key: [v for v in found.values() if v != DIVERGED] for key, found in per_seed_outcomes(cells).items()}
    return bimodal_cells(completed)


def bimodal_note(cells: Cells, shown=lambda arm: arm) -> str | None:
    """One line naming the split cells, or None."""
    splits = bimodal_splits(cells)
    if not splits:
        return None
    named = "; ".join(f"{shown(arm)}{'' if lr is None else f' lr={lr:g}'} ({split.describe()})"
                      for (arm, lr), split in sorted(splits.items(), key=lambda item: (item[0][0], item[0][1] or 0.0)))
    return (f"per-seed outcomes split into two groups in {len(splits)} cell{'s' if len(splits) != 1 else ''}: {named}; "
            "a run escapes a plateau or not, and a mean over both describes neither")


def direction(pairs: Pairs) -> np.ndarray:
    """Per row, the order its evidence points to, resolved or not: the side with more discordant divergences is
    behind; else the sign of the survivors' mean difference (0: none). −1 means the arm is ahead."""
    with np.errstate(invalid="ignore"):
        by_loss = np.where(np.isnan(pairs.loss.delta.mean), 0, np.sign(pairs.loss.delta.mean))
    return np.where(pairs.arm_only != pairs.baseline_only, np.sign(pairs.arm_only - pairs.baseline_only), by_loss)


def decided_by(verdict: str, tests: int, robust: bool) -> str | None:
    """Which test gave a resolved fixed-n verdict (None for an unresolved one)."""
    family = f"Holm across {tests} test{'s' if tests != 1 else ''}"
    loss = "paired t-test and sign test" if robust else "paired t-test"
    tests_by_verdict: dict[str, str] = {Verdict.LESS_STABLE: f"Fisher's exact test, {family}",
            Verdict.MORE_STABLE: f"Fisher's exact test, {family}", Verdict.BETTER: f"{loss}, {family}",
            Verdict.WORSE: f"{loss}, {family}", Verdict.NEGLIGIBLE: "95% t-interval inside ±min_effect"}
    return tests_by_verdict.get(verdict)


def _fill(rows: list[ComparisonRow], compared: list[int], pairs: Pairs, min_effect: float, robust: bool) -> None:
    """The pair fields of the compared rows, tested as one table."""
    raw, (p_holm, p_stability_holm) = loss_p(pairs, robust), holm_family(pairs, robust)
    tests = int(np.sum(~np.isnan(p_holm)) + np.sum(~np.isnan(p_stability_holm)))
    decided = verdicts(pairs, p_holm, p_stability_holm, min_effect)
    order = direction(pairs)
    loss = pairs.loss
    needed = stats.seeds_needed_rows(loss.sd, loss.delta.n, min_effect)
    observed = _observed_needs(loss)
    for k, index in enumerate(compared):
        n = int(loss.delta.n[k])
        rows[index].update({
            "n_pairs": int(pairs.n_pairs[k]), "arm_diverged": int(pairs.arm_diverged[k]),
            "baseline_diverged": int(pairs.baseline_diverged[k]), "arm_only": int(pairs.arm_only[k]),
            "baseline_only": int(pairs.baseline_only[k]), "p_stability": float(pairs.p_stability[k]),
            "p_stability_holm": float(p_stability_holm[k]), "n": n, "delta": float(loss.delta.mean[k]),
            "delta_ci_low": float(loss.delta.low[k]), "delta_ci_high": float(loss.delta.high[k]),
            "p": float(raw[k]), "p_holm": float(p_holm[k]), "survivors_only": bool(pairs.survivors_only[k]),
            "verdict": Verdict(decided[k]), "decided_by": decided_by(decided[k], tests, robust),
            "seeds_needed": None if math.isnan(needed[k]) else int(needed[k]),
            "seeds_needed_observed": None if math.isnan(observed[k]) else int(observed[k]),
            "direction": int(order[k]),
        })


def _observed_needs(loss) -> np.ndarray:
    """`seeds_needed` of each row with its own observed |delta| as the effect (NaN where there is none)."""
    effect = np.abs(loss.delta.mean)
    known = np.isfinite(effect) & (effect > 0)
    needed = stats.seeds_needed_rows(np.where(known, loss.sd, np.nan), loss.delta.n, np.where(known, effect, 1.0))
    return np.where(known, needed, np.nan)
