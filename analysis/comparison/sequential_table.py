"""The anytime-valid comparison table: `harness compare --sequential`, the decisions `harness sweep --until-decided`
acts on, and the report's headline after seeds were added adaptively.

Per (arm, lr), the arm's outcomes are matched with the baseline's at the same LR seed by seed, in seed order, and
looked at after every seed. The outcome model and the verdicts are the fixed-n table's (`analysis.comparison.rules`:
divergence is an outcome; a discordant divergence of the side a loss claim favours bars it); only the tests are
anytime-valid (`analysis.comparison.sequential`):

- the loss: the t confidence sequence of the differences on the seeds both completed (with `robust`, also the sign
  e-process of their signs: a claim needs both, p the larger);
- the divergences: the sign e-process of the discordant ones (which side diverged where the other completed);
- **family-wise control**: Holm's step-down across every test of the table — each row's loss test and divergence
  test, 2 × rows in all, the same family at every look — on the anytime-valid p-values. Holm is valid for any
  p-values, and an anytime-valid p-value is valid at any stopping time, so the chance that *some* row is ever
  wrongly decided, looking after every seed, is at most α (docs/analysis.md; simulated in tests/analysis);
- `negligible` reads the 95% confidence sequence, as the fixed-n table reads the 95% interval.

`decided_at` is the number of matched seeds at the first look from which the row's verdict stayed what it is now
(a later divergence can bar a loss verdict again). Vectorized over leading axes: rows, and simulated sweeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from analysis.comparison.row import ComparisonRow
from analysis.comparison.rules import Evidence, Verdict, decide
from analysis.comparison.sequential import (
    ALPHA,
    anytime_p,
    interval_from_sums,
    log_e_from_sums,
    log_sign_e,
    running_sums,
)
from analysis.comparison.stats import holm
from analysis.comparison.table import per_seed_outcomes
from analysis.reading.cells import MIN_EFFECT, Cells

SEQUENTIAL_COLUMNS = ["cs_low", "cs_high", "p_seq", "p_seq_holm", "seq_verdict", "decided_at", "seq_decided_by"]


@dataclass(frozen=True)
class SequentialTable:
    """Per row ([..., rows]), after the last seed: the verdict, the matched seeds at its decision (0: undecided),
    the 95% confidence sequence, the anytime p-values raw and Holm-adjusted, and the discordant divergences."""

    verdict: np.ndarray
    decided_at: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p_loss: np.ndarray
    p_loss_holm: np.ndarray
    p_stability: np.ndarray
    p_stability_holm: np.ndarray
    n_pairs: np.ndarray
    arm_only: np.ndarray
    baseline_only: np.ndarray
    tests: int  # the Holm family's size: 2 × rows


def _holm_per_look(p_loss: np.ndarray, p_stability: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Holm across rows × {loss, stability} at every look: arrays [..., rows, looks]."""
    rows = p_loss.shape[-2]
    family = np.swapaxes(np.concatenate([p_loss, p_stability], axis=-2), -1, -2)  # [..., looks, 2·rows]
    adjusted = np.swapaxes(holm(family), -1, -2)
    return adjusted[..., :rows, :], adjusted[..., rows:, :]


def _loss_p(d: np.ndarray, done: np.ndarray, sums, robust: bool) -> np.ndarray:
    """Anytime p of the loss at every look: the t e-process's, or with `robust` the larger of it and the sign
    e-process's (1 where the mean and the majority of signs point different ways)."""
    p_t = anytime_p(log_e_from_sums(*sums))
    if not robust:
        return p_t
    negative, positive = done & (d < 0), done & (d > 0)
    p_sign = anytime_p(log_sign_e(negative, positive))
    agree = (sums[1] < 0) == (np.cumsum(negative, axis=-1) > np.cumsum(positive, axis=-1))
    return np.where(agree, np.fmax(p_t, p_sign), 1.0)


def sequential_table(arm, baseline, min_effect: float = MIN_EFFECT, robust: bool = False,
                     alpha: float = ALPHA) -> SequentialTable:
    """The table of arrays `arm`, `baseline` [..., rows, seeds] (a finite loss, +inf diverged, NaN no outcome),
    seeds aligned in seed order on the last axis (see the module docstring)."""
    arm, baseline = np.asarray(arm, dtype=float), np.asarray(baseline, dtype=float)
    matched = ~np.isnan(arm) & ~np.isnan(baseline)
    arm_gone, baseline_gone = matched & np.isinf(arm), matched & np.isinf(baseline)
    done = matched & ~arm_gone & ~baseline_gone
    with np.errstate(invalid="ignore"):
        d = np.where(done, arm - baseline, 0.0)
    sums = running_sums(d, done)
    low, high = interval_from_sums(*sums, alpha=alpha)
    arm_only, baseline_only = arm_gone & ~baseline_gone, baseline_gone & ~arm_gone
    p_loss, p_stability = _loss_p(d, done, sums, robust), anytime_p(log_sign_e(arm_only, baseline_only))
    p_loss_holm, p_stability_holm = _holm_per_look(p_loss, p_stability)
    n, s, _ = sums
    with np.errstate(invalid="ignore", divide="ignore"):
        direction = np.where(high < 0, -1, np.where(low > 0, 1, np.sign(np.where(n > 0, s, 0.0))))
    counts = np.cumsum(arm_only, axis=-1), np.cumsum(baseline_only, axis=-1)
    evidence = Evidence(p_stability_holm < alpha, p_loss_holm < alpha, np.zeros(d.shape, bool),
                        (low > -min_effect) & (high < min_effect), direction, *counts)
    looks = decide(evidence, "sequential")
    final = looks[..., -1]
    return SequentialTable(final, _decided_at(looks, final, np.cumsum(matched, axis=-1)), low[..., -1], high[..., -1],
                           p_loss[..., -1], p_loss_holm[..., -1], p_stability[..., -1], p_stability_holm[..., -1],
                           matched.sum(-1), counts[0][..., -1], counts[1][..., -1], 2 * arm.shape[-2])


def _decided_at(looks: np.ndarray, final: np.ndarray, matched_so_far: np.ndarray) -> np.ndarray:
    """Matched seeds at the first look from which each row's verdict stayed `final` (0 when undecided)."""
    seeds = looks.shape[-1]
    changed = looks != final[..., None]
    last_change = np.where(changed.any(-1), seeds - 1 - np.argmax(changed[..., ::-1], axis=-1), -1)
    since = np.minimum(last_change + 1, seeds - 1)
    at = np.take_along_axis(matched_so_far, since[..., None], axis=-1)[..., 0]
    return np.where(final == str(Verdict.UNDECIDED), 0, at)


def table_arrays(cells: Cells) -> tuple[list[tuple], np.ndarray, np.ndarray]:
    """The non-baseline (arm, lr) rows of `cells` and their outcomes [rows, seeds] beside the baseline's at the
    same LR, on the sorted union of the seeds."""
    outcomes = per_seed_outcomes(cells)
    keys = sorted((key for key in outcomes if key[0] != cells.baseline),
                  key=lambda key: (key[0], key[1] is None, key[1] or 0.0))
    seeds = sorted({seed for found in outcomes.values() for seed in found})
    grid = {seed: i for i, seed in enumerate(seeds)}
    arm, baseline = np.full((len(keys), len(seeds)), np.nan), np.full((len(keys), len(seeds)), np.nan)
    for row, (name, lr) in enumerate(keys):
        for side, found in ((arm, outcomes[(name, lr)]), (baseline, outcomes.get((cells.baseline, lr), {}))):
            for seed, value in found.items():
                side[row, grid[seed]] = value
    return keys, arm, baseline


def decided_by(verdict: str, tests: int, robust: bool) -> str | None:
    """Which anytime-valid test gave a decided verdict (None for `undecided`)."""
    family = f"Holm across {tests} tests at every seed"
    loss = "t confidence sequence and sign e-process" if robust else "t confidence sequence"
    tests_by_verdict: dict[str, str] = {Verdict.LESS_STABLE: f"anytime-valid sign e-process of divergences, {family}",
            Verdict.MORE_STABLE: f"anytime-valid sign e-process of divergences, {family}",
            Verdict.BETTER: f"anytime-valid {loss}, {family}", Verdict.WORSE: f"anytime-valid {loss}, {family}",
            Verdict.NEGLIGIBLE: "95% confidence sequence inside ±min_effect"}
    return tests_by_verdict.get(verdict)


@dataclass(frozen=True)
class Decision:
    """One row of the table: its verdict, the matched seeds at the decision (None: undecided) and so far."""

    verdict: Verdict
    decided_at: int | None
    n: int
    low: float
    high: float
    p: float
    p_holm: float
    decided_by: str | None


def sequential_decisions(cells: Cells, min_effect: float = MIN_EFFECT, robust: bool = False) -> dict[tuple, Decision]:
    """(arm, lr) of every non-baseline row → its anytime-valid decision against the baseline."""
    keys, arm, baseline = table_arrays(cells)
    if not keys:
        return {}
    table = sequential_table(arm, baseline, min_effect, robust)
    found = {}
    for i, key in enumerate(keys):
        verdict = Verdict(table.verdict[i])
        stability = verdict in (Verdict.LESS_STABLE, Verdict.MORE_STABLE)
        found[key] = Decision(verdict, int(table.decided_at[i]) or None, int(table.n_pairs[i]), float(table.low[i]),
                              float(table.high[i]), float(table.p_stability[i] if stability else table.p_loss[i]),
                              float(table.p_stability_holm[i] if stability else table.p_loss_holm[i]),
                              decided_by(verdict, table.tests, robust))
    return found


def add_sequential(rows: list[ComparisonRow], cells: Cells, min_effect: float = MIN_EFFECT,
                   robust: bool = False) -> None:
    """Fill `SEQUENTIAL_COLUMNS` into the comparison's rows (the baseline's: empty, verdict 'baseline'); a bound
    is empty while the sequence still spans the whole line (under five pairs at α = 0.05)."""
    decisions = sequential_decisions(cells, min_effect, robust)
    for row in rows:
        test = decisions.get((row["arm"], row["lr"]))
        if test is None:
            row.update({"cs_low": math.nan, "cs_high": math.nan, "p_seq": math.nan, "p_seq_holm": math.nan,
                        "seq_verdict": Verdict.BASELINE, "decided_at": None, "seq_decided_by": None})
            continue
        low, high = (bound if math.isfinite(bound) else math.nan for bound in (test.low, test.high))  # ±inf: no bound
        row.update({"cs_low": low, "cs_high": high, "p_seq": test.p, "p_seq_holm": test.p_holm,
                    "seq_verdict": test.verdict, "decided_at": test.decided_at, "seq_decided_by": test.decided_by})
