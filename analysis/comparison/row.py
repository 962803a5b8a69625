"""One row of the comparison table: an arm at one LR against the baseline at the same LR, on matched seeds.

A `TypedDict`, not a dataclass: rows become pandas frames, JSON and CSV as they are, and the steps after the
fixed-n table add their columns in place (the anytime-valid table's, a search's selection, the headline's test);
mypy checks every key and value wherever a row is read or written.
"""

import math
from typing import Literal, NotRequired, TypedDict

from analysis.comparison.rules import Verdict


class ComparisonRow(TypedDict):
    """The baseline's own rows have nothing to pair: None counts, NaN statistics, verdict `Verdict.BASELINE`."""

    arm: str
    lr: float | None  # None: a search that tunes the LR itself, or a headline's row (each side at its best LR)
    seeds: int  # completed seeds
    diverged: int  # diverged runs
    mean: float  # over completed seeds, with its 95% t-interval
    ci_low: float
    ci_high: float
    # against the baseline at the same LR, on matched seeds: divergences (Fisher's exact test on the discordant ones)
    n_pairs: int | None
    arm_diverged: int | None
    baseline_diverged: int | None
    arm_only: int | None  # matched seeds where only the arm diverged
    baseline_only: int | None
    p_stability: float
    p_stability_holm: float
    # ... and the loss on the pairs both completed (paired t-test)
    n: int | None
    delta: float  # arm − baseline, nats
    delta_ci_low: float
    delta_ci_high: float
    p: float
    p_holm: float
    survivors_only: bool | None  # the loss test saw only the seeds both sides survived
    verdict: Verdict
    decided_by: str | None  # the test that resolved the verdict (None: unresolved)
    seeds_needed: int | None  # matched seeds for 80% power at min_effect
    seeds_needed_observed: int | None  # ... at the observed |delta|
    direction: int | None  # the order the evidence points to, resolved or not: −1 the arm ahead, +1 the baseline
    # the anytime-valid table's columns (`analysis.comparison.sequential_table.add_sequential`)
    cs_low: NotRequired[float]
    cs_high: NotRequired[float]
    p_seq: NotRequired[float]
    p_seq_holm: NotRequired[float]
    seq_verdict: NotRequired[Verdict]
    decided_at: NotRequired[int | None]  # the pair count it was decided at
    seq_decided_by: NotRequired[str | None]
    # a searched arm's: how its seed outcomes were chosen (`analysis.reading.cells.add_selection`)
    selection: NotRequired[str | None]
    # a headline's: the table that judged it ('fixed' or 'anytime'), and how its seeds split into two groups
    test: NotRequired[Literal["fixed", "anytime"]]
    bimodal: NotRequired[str | None]


def baseline_row(arm: str, lr: float | None, seeds: int, diverged: int, mean: float, ci_low: float,
                 ci_high: float) -> ComparisonRow:
    """A row with its own statistics and nothing paired yet: the baseline's as it stays, any other arm's until the
    table fills its pair fields."""
    nan = math.nan
    return ComparisonRow(arm=arm, lr=lr, seeds=seeds, diverged=diverged, mean=mean, ci_low=ci_low, ci_high=ci_high,
                         n_pairs=None, arm_diverged=None, baseline_diverged=None, arm_only=None, baseline_only=None,
                         p_stability=nan, p_stability_holm=nan, n=None, delta=nan, delta_ci_low=nan, delta_ci_high=nan,
                         p=nan, p_holm=nan, survivors_only=None, verdict=Verdict.BASELINE, decided_by=None,
                         seeds_needed=None, seeds_needed_observed=None, direction=None)
