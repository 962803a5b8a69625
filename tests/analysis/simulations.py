"""Simulated sweeps with a known truth, for the verdict and reversal rules (tests and docs/analysis.md).

    python tests/analysis/simulations.py [--sweeps 10000]

prints every rate docs/analysis.md quotes. Each scenario draws many sweeps at once as numpy arrays (seeds on
the last axis; `analysis.comparison.pairs.DIVERGED` marks a divergence) and runs them through the same functions that
`harness compare` runs (`analysis.comparison.pairs`, `analysis.comparison.verdicts`, `analysis.ladder.reversals`),
vectorized over the sweeps. The truth each rate is judged against is the scenario's own construction; the competing
rules printed beside ours (the old rule, McNemar) are written here with scipy alone.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy import stats as scipy_stats

from analysis.comparison.pairs import DIVERGED, compare_pairs
from analysis.comparison.sequential_table import sequential_table
from analysis.comparison.verdicts import holm_family, verdicts
from analysis.ladder.reversals import scale_reversals

MIN_EFFECT = 0.01
SEED_SPREAD = 0.05  # per-seed offset shared by both arms (what pairing removes)


def decide(arm: np.ndarray, baseline: np.ndarray, min_effect: float = MIN_EFFECT) -> np.ndarray:
    """The verdict of a one-arm comparison table per simulated sweep: arrays [sweeps, seeds] → [sweeps]."""
    pairs = compare_pairs(arm[:, None, :], baseline[:, None, :])
    p_holm, p_stability_holm = holm_family(pairs)
    return verdicts(pairs, p_holm, p_stability_holm, min_effect)[:, 0]


def decide_table(arm: np.ndarray, baseline: np.ndarray, min_effect: float = MIN_EFFECT,
                 robust: bool = False) -> np.ndarray:
    """The fixed-n verdicts of whole tables: arrays [sweeps, rows, seeds] → [sweeps, rows]."""
    pairs = compare_pairs(arm, baseline)
    p_holm, p_stability_holm = holm_family(pairs, robust)
    return verdicts(pairs, p_holm, p_stability_holm, min_effect)


def decide_sequential(arm: np.ndarray, baseline: np.ndarray, min_effect: float = MIN_EFFECT, robust: bool = False):
    """The anytime-valid verdicts of whole tables, looked at after every seed: [sweeps, rows, seeds] →
    [sweeps, rows]."""
    return sequential_table(arm, baseline, min_effect, robust).verdict


def survivorship_null(rng, sweeps: int, seeds: int = 10, noise: float = 0.01, margin: float = 0.005):
    """The arm has the baseline's loss distribution but diverges on each seed where it would have ended more
    than `margin` worse than the baseline: (arm, baseline) [sweeps, seeds]."""
    offsets = rng.normal(0, SEED_SPREAD, (sweeps, seeds))
    baseline = 3.0 + offsets + rng.normal(0, noise, (sweeps, seeds))
    would = 3.0 + offsets + rng.normal(0, noise, (sweeps, seeds))
    return np.where(would - baseline > margin, DIVERGED, would), baseline


def diverged_on(rng, sweeps: int, gone: int, seeds: int = 6, effect: float = 0.0, noise: float = 0.003):
    """`gone` of `seeds` seeds (chosen at random) diverge; the survivors differ by `effect` with run noise
    `noise` (0: every survivor differs by exactly `effect`). Returns (unstable side, stable side)."""
    offsets = rng.normal(0, SEED_SPREAD, (sweeps, seeds))
    stable = 3.0 + offsets + rng.normal(0, noise, (sweeps, seeds))
    unstable = stable + effect + (rng.normal(0, noise, (sweeps, seeds)) if noise else 0.0)
    order = rng.random((sweeps, seeds)).argsort(axis=1)
    return np.where(order < gone, DIVERGED, unstable), stable


def worst_seed_divergences(rng, sweeps: int, seeds: int, rate: float = 0.2, noise: float = 0.01):
    """The baseline diverges on random seeds at `rate`; the arm, identical in loss, diverges as often but on the
    seeds where its own run would have been worst (its highest run noise): (arm, baseline) [sweeps, seeds]."""
    offsets = rng.normal(0, SEED_SPREAD, (sweeps, seeds))
    arm_noise, base_noise = rng.normal(0, noise, (2, sweeps, seeds))
    gone = int(round(rate * seeds))
    worst = np.argsort(np.argsort(-arm_noise, axis=1), axis=1) < gone
    arm = np.where(worst, DIVERGED, 3.0 + offsets + arm_noise)
    baseline = np.where(rng.random((sweeps, seeds)) < rate, DIVERGED, 3.0 + offsets + base_noise)
    return arm, baseline


def null_table(rng, sweeps: int, seeds: int, arms: int = 3, lrs: int = 3, noise: float = 0.01, shift: float = 0.0):
    """A table of `arms` × `lrs` rows, each arm identical to the baseline (the baseline's runs at an LR shared by
    the arms there), the first row shifted by `shift`: (arm, baseline) [sweeps, rows, seeds]."""
    offsets = rng.normal(0, SEED_SPREAD, (sweeps, 1, 1, seeds))
    lr_effect = rng.normal(0, 0.1, (1, 1, lrs, 1))
    baseline = 3.0 + offsets + lr_effect + rng.normal(0, noise, (sweeps, 1, lrs, seeds))
    arm = 3.0 + offsets + lr_effect + rng.normal(0, noise, (sweeps, arms, lrs, seeds))
    arm[:, 0, 0] += shift
    return (arm.reshape(sweeps, arms * lrs, seeds),
            np.broadcast_to(baseline, arm.shape).reshape(sweeps, arms * lrs, seeds))


def skewed_null(rng, sweeps: int, seeds: int, scale: float = 0.01):
    """Per-seed differences c·(exp(Z) − e^½), Z ~ N(0, 1): mean 0 but most seeds favour the arm a little and a few
    disfavour it a lot. Returns (arm, baseline) [sweeps, seeds]."""
    baseline = 3.0 + rng.normal(0, SEED_SPREAD, (sweeps, seeds))
    return baseline + scale * (np.exp(rng.normal(size=(sweeps, seeds))) - np.exp(0.5)), baseline


def correlated_divergences(rng, sweeps: int, seeds: int, rate: float, correlation: float):
    """Both sides diverge at `rate`, a seed's two divergences correlated (a shared latent normal): the null of
    equal stability. Returns boolean arrays (arm diverged, baseline diverged) [sweeps, seeds]."""
    shared = rng.normal(size=(sweeps, seeds))
    latent = [np.sqrt(correlation) * shared + np.sqrt(1 - correlation) * rng.normal(size=(sweeps, seeds))
              for _ in range(2)]
    cut = scipy_stats.norm.ppf(rate)
    return latent[0] < cut, latent[1] < cut


def old_rule_better(arm: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """The rule before issue 15: paired t on the seeds both completed, divergences ignored, `better` when
    p < 0.05 (one arm: Holm changes nothing), the CI not inside ±MIN_EFFECT and the mean below 0."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():  # under two pairs: NaN, no verdict
        warnings.simplefilter("ignore")
        diffs = np.where(np.isfinite(arm) & np.isfinite(baseline), arm - baseline, np.nan)
        result = scipy_stats.ttest_1samp(diffs, 0.0, axis=1, nan_policy="omit")
        n = np.isfinite(diffs).sum(axis=1)
        mean = np.nanmean(diffs, axis=1)
        half = scipy_stats.t.ppf(0.975, np.maximum(n - 1, 1)) * np.nanstd(diffs, axis=1, ddof=1) / np.sqrt(n)
    negligible = (mean - half > -MIN_EFFECT) & (mean + half < MIN_EFFECT)
    return (np.asarray(result.pvalue) < 0.05) & (mean < 0) & ~negligible & (n >= 2)


def count_guard_better(arm: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """The fixed verdict before issue 23: `better` when the survivors' paired t-test resolves it and the arm
    diverged on no more matched seeds than the baseline (counts compared, not seeds), written with scipy alone."""
    more = np.isinf(arm).sum(axis=1) > np.isinf(baseline).sum(axis=1)
    return old_rule_better(arm, baseline) & ~more


def gate_only_better(arm: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """The old rule, only barred when Fisher's test resolves that the arm diverges more (scipy alone)."""
    gone = np.isinf(arm).sum(axis=1)
    seeds = arm.shape[1]
    p = np.array([scipy_stats.fisher_exact([[g, seeds - g], [0, seeds]]).pvalue for g in gone])
    return old_rule_better(arm, baseline) & ~(p < 0.05)


def mcnemar_p(arm_only: np.ndarray, baseline_only: np.ndarray) -> np.ndarray:
    """McNemar's exact test: two-sided binomial test of the discordant pairs (scipy.stats.binomtest)."""
    return np.array([scipy_stats.binomtest(int(a), int(a + b)).pvalue if a + b else np.nan
                     for a, b in zip(arm_only, baseline_only)])


def two_widths(rng, sweeps: int, shift: float, noise: float = 0.01, lr_penalty=(0.03, 0.0, 0.03), seeds: int = 4,
               shift_at_second: float | None = None):
    """Two variants at two widths, 3 LRs × `seeds` seeds: loss[sweeps, width, variant, lr, seed]. The second
    variant is `shift` worse at the first width and `shift_at_second` (default −shift) at the second; the LR
    penalty is shared, the seed offsets shared by every run of a seed at a width."""
    shift_at_second = -shift if shift_at_second is None else shift_at_second
    offsets = rng.normal(0, SEED_SPREAD, (sweeps, 2, 1, 1, seeds))
    effect = np.zeros((1, 2, 2, 1, 1))
    effect[0, 0, 1], effect[0, 1, 1] = shift, shift_at_second
    penalty = np.asarray(lr_penalty)[None, None, None, :, None]
    return 3.0 + offsets + effect + penalty + rng.normal(0, noise, (sweeps, 2, 2, len(lr_penalty), seeds))


def flagged(loss: np.ndarray) -> np.ndarray:
    """Per simulated sweep: was any reversal flagged?"""
    return scale_reversals(loss).flagged.reshape(len(loss), -1).any(axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=10_000)
    args = parser.parse_args()
    rng = np.random.default_rng(15)
    n = args.sweeps
    print(f"-- survivorship null, 10 seeds, {n} sweeps: share called `better`")
    for noise in (0.002, 0.005, 0.01, 0.03):
        arm, baseline = survivorship_null(rng, n, noise=noise)
        gone = np.isinf(arm).sum(axis=1)
        print(f"run noise sd {noise}: arm diverged on {gone.mean():.1f} of 10 seeds on average; old rule "
              f"{old_rule_better(arm, baseline).mean():.3f}, old rule barred by the divergence test "
              f"{gate_only_better(arm, baseline).mean():.3f}, ours {(decide(arm, baseline) == 'better').mean():.3f}")
    print(f"-- an arm that diverged on 4 of 6 seeds against a stable baseline, {n} sweeps each: verdicts")
    for effect, noise in ((-0.1, 0.003), (-0.1, 0.0), (0.0, 0.0), (0.0, 0.001), (0.1, 0.003)):
        arm, baseline = diverged_on(rng, n, 4, effect=effect, noise=noise)
        found = dict(zip(*np.unique(decide(arm, baseline), return_counts=True)))
        print(f"survivors {effect:+} nats, noise {noise}: {found}")
    print(f"-- a stable arm against a baseline that diverged on k of 6 seeds, {n} sweeps each")
    for gone in (3, 4, 5, 6):
        baseline, arm = diverged_on(rng, n, gone)
        found = dict(zip(*np.unique(decide(arm, baseline), return_counts=True)))
        fisher = scipy_stats.fisher_exact([[0, 6], [gone, 6 - gone]]).pvalue
        mcnemar = scipy_stats.binomtest(0, gone).pvalue
        print(f"k = {gone}: Fisher p {fisher:.4f}, McNemar p {mcnemar:.4f}; ours: {found}")
    print(f"-- equal stability, divergences of a seed correlated across the arms, {n} sweeps: share with p < 0.05")
    for seeds in (6, 10):
        for rate in (0.2, 0.5):
            for correlation in (0.0, 0.5, 0.9):
                arm_gone, base_gone = correlated_divergences(rng, n, seeds, rate, correlation)
                arm = np.where(arm_gone, DIVERGED, 3.0)
                pairs = compare_pairs(arm, np.where(base_gone, DIVERGED, 3.0))
                mcnemar = mcnemar_p((arm_gone & ~base_gone).sum(1), (base_gone & ~arm_gone).sum(1))
                print(f"{seeds} seeds, rate {rate}, correlation {correlation}: Fisher "
                      f"{np.mean(pairs.p_stability < 0.05):.4f}, McNemar {np.mean(mcnemar < 0.05):.4f}")
    print(f"-- the one outcome model on every path, {n} sweeps each: share of sweeps")
    paths = (("fixed-n", decide_table), ("anytime-valid", decide_sequential))
    for seeds in (20, 40):
        arm, baseline = survivorship_null(rng, n, seeds=seeds, noise=0.01)
        rates = ", ".join(f"{name} {np.mean(rule(arm[:, None], baseline[:, None])[:, 0] == 'better'):.4f}"
                          for name, rule in paths)
        print(f"survivorship null, {seeds} seeds (noise 0.01): `better` {rates}")
    for seeds in (10, 20, 40):
        arm, baseline = worst_seed_divergences(rng, n, seeds)
        rates = ", ".join(f"{name} {np.mean(rule(arm[:, None], baseline[:, None])[:, 0] == 'better'):.4f}"
                          for name, rule in paths)
        print(f"worst-seed divergences at the baseline's rate 0.2, {seeds} seeds: `better` {rates}; "
              f"old count guard {np.mean(count_guard_better(arm, baseline)):.4f}")
    for seeds in (10, 20, 40):
        arm, baseline = null_table(rng, n, seeds)
        rates = ", ".join(f"{name} {np.mean(np.isin(rule(arm, baseline), ['better', 'worse']).any(axis=1)):.4f}"
                          for name, rule in paths)
        print(f"nine null rows, {seeds} seeds: some row better/worse {rates}")
    for effect in (1.0, 1.5):
        arm, baseline = null_table(rng, n, 20, shift=-effect * 0.01 * np.sqrt(2))
        rates = ", ".join(f"{name} {np.mean(rule(arm, baseline)[:, 0] == 'better'):.4f}" for name, rule in paths)
        print(f"a planted {effect} paired-sd effect among nine rows, 20 seeds: decided `better` {rates}")
    for seeds in (20, 40):
        arm, baseline = skewed_null(rng, n, seeds)
        shares = {label: np.mean(decide_sequential(arm[:, None], baseline[:, None], robust=robust)[:, 0] == "better")
                  for label, robust in (("t sequence", False), ("--robust", True))}
        rates = ", ".join(f"{label} {share:.4f}" for label, share in shares.items())
        shares = {label: np.mean(decide_table(arm[:, None], baseline[:, None], robust=robust)[:, 0] == "better")
                  for label, robust in (("t-test", False), ("--robust", True))}
        fixed = ", ".join(f"{label} {share:.4f}" for label, share in shares.items())
        print(f"skewed null (centred lognormal), {seeds} seeds: `better` anytime-valid {rates}; fixed-n {fixed}")
    print(f"-- two variants at two widths, 3 LRs × 4 seeds, run noise sd 0.01, {n} sweeps: share flagged as reversing")
    for label, shift, second in (("identical", 0.0, None), ("planted reversal ±0.05", 0.05, None),
                                 ("0.05 apart at one width, identical at the other", 0.05, 0.0)):
        for penalty in ((0.0, 0.0, 0.0), (0.03, 0.0, 0.03)):
            loss = two_widths(rng, n, shift, lr_penalty=penalty, shift_at_second=second)
            means = loss.mean(axis=-1).min(axis=-1)  # each variant's best mean over LRs
            gap = means[:, :, 1] - means[:, :, 0]
            print(f"{label}, LR penalty {penalty}: ours {flagged(loss).mean():.4f}; "
                  f"old rule (any sign change of the best means) {np.mean(gap[:, 0] * gap[:, 1] < 0):.4f}")


if __name__ == "__main__":
    main()
