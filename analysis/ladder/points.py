"""A ladder's points, read from the store: per arm (a *variant* here), rung and seed, the run's loss at that
rung's best LR, its training compute and its parameters.

- A run's **rung** is its `d_model` and `n_layers` (`experiments.declare.ladder.RUNG_FIELDS`); rungs are ordered
  by their parameters, and the largest rung is the last.
- Its **variant** is its arm's name up to `@`: a ladder's arm is `<grid arm>@<rung>` (so `qk_norm=rmsnorm@d_model=128,
  n_layers=4` is variant `qk_norm=rmsnorm`); runs written with `db.RunWriter` under one arm name at several
  sizes are that arm's ladder. Display labels follow the same rule.
- Its **compute** is its training FLOPs: `flops_per_token` × the tokens it trained (its last `tokens` metric).
- At each rung a variant is judged at its **best LR**, the argmin of its mean ℓ (the LR sensitivity's rule: a
  divergence counts as ℓ₀, so a lucky survivor of an unstable LR cannot win it). There, a completed run enters
  with its metric; a diverged one is counted and left out of the fit (it has no loss to fit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError, suggestion
from analysis.ladder import RUNG_FIELDS, SEPARATOR
from analysis.ladder.across import shown
from analysis.reading.frames import Sweep
from analysis.reading.outcomes import COMPLETED
from analysis.signals.sensitivity import run_losses


@dataclass(frozen=True)
class LadderData:
    """Arrays over [variant, rung(, seed)], the baseline variant first and rungs smallest first; `loss` is NaN
    where a seed has no completed run at the variant's best LR there."""

    variants: list[str]
    labels: list[str]  # what tables and legends call each variant
    rungs: list[str]  # `d_model=128,n_layers=4` (the rung fields that vary)
    seeds: list[int]
    loss: np.ndarray  # [V, R, S]
    compute: np.ndarray  # [V, R] training FLOPs of a run (median over its completed runs), NaN: no run
    params: np.ndarray  # [V, R]
    lr: np.ndarray  # [V, R] the best LR (NaN: none, or a searched LR)
    diverged: np.ndarray  # [V, R] runs at the best LR that diverged (left out of the fit)
    sql: list[str]

    @property
    def n_seeds(self) -> np.ndarray:
        """[V, R] completed runs at the best LR."""
        return (~np.isnan(self.loss)).sum(-1)

    def axis(self, name: str) -> np.ndarray:
        """[V, R] the x of a fit: 'compute' or 'params'."""
        return self.compute if name == "compute" else self.params


def _sizes(sweep: Sweep) -> tuple[pd.DataFrame, str]:
    """Per run: its rung fields, parameters and training compute; the SQL."""
    fields = ", ".join(f"r.{name}" if name in sweep.runs.columns else f"NULL AS {name}" for name in RUNG_FIELDS)
    return sweep.frame(f"""
        SELECT r.run_id, {fields}, r.params, r.flops_per_token, t.tokens, r.flops_per_token * t.tokens AS compute
        FROM sweep_runs r LEFT JOIN (
            SELECT run_id, max(value) AS tokens FROM metrics
            WHERE name = 'tokens' AND run_id IN (SELECT run_id FROM sweep_runs) GROUP BY run_id) t USING (run_id)
        ORDER BY r.run_id
    """)


def _rung_labels(runs: pd.DataFrame) -> pd.Series:
    """Each run's rung as text, from the rung fields that take several values."""
    varying = [name for name in RUNG_FIELDS if runs[name].nunique() > 1] or [RUNG_FIELDS[0]]
    return runs[varying].apply(lambda row: ",".join(f"{k}={shown(v)}" for k, v in row.items()), axis=1)


def ladder_runs(sweep: Sweep, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """One row per run with an outcome: variant, rung, lr, seed, outcome, value, loss (ℓ), diverged, compute,
    params; AnalysisError when no variant has runs at two rungs."""
    runs, sql = run_losses(sweep, metric)
    sizes, sizes_sql = _sizes(sweep)
    runs = runs.merge(sizes, on="run_id")
    runs = runs.assign(variant=runs["arm"].str.split(SEPARATOR, n=1).str[0], rung=_rung_labels(runs),
                       lr=runs["lr"].fillna(-1.0))  # a searched LR (none) is one LR of its own
    spans = runs.groupby("variant")["rung"].nunique()
    if spans.empty or spans.max() < 2:
        raise AnalysisError(f"sweep {sweep.info.name!r} is not a ladder: no arm has finished runs at two sizes "
                            f"({' and '.join(RUNG_FIELDS)}); declare one with Ablation(ladder=ladder(...)) "
                            "(docs/sweeps.md).")
    return runs, [*sql, sizes_sql]


def variant_labels(sweep: Sweep) -> dict[str, str]:
    """variant → its display label (the plan's arm label up to `@`), for the variants that have one."""
    return {arm.split(SEPARATOR, 1)[0]: label.split(SEPARATOR, 1)[0] for arm, label in sweep.labels.items()}


def baseline_variant(sweep: Sweep, variants, baseline: str | None) -> str:
    """The variant to compare against: `baseline` as a variant, its label, or an arm (a ladder's `<arm>@<rung>`);
    None: the sweep's baseline arm's. AnalysisError naming the closest variant when none matches."""
    from analysis.reading.finished import resolve_baseline

    by_label = {label: variant for variant, label in variant_labels(sweep).items()}
    if baseline is not None and (baseline in variants or baseline in by_label):
        return by_label.get(baseline, baseline)
    if baseline is None or baseline in sweep.arms:
        return resolve_baseline(sweep, baseline).split(SEPARATOR, 1)[0]
    raise AnalysisError(f"baseline {baseline!r} is not an arm of ladder {sweep.info.name!r}"
                        + suggestion(baseline, variants, "arms"))


def ladder_data(sweep: Sweep, metric: str, baseline: str | None = None) -> LadderData:
    """The sweep's ladder (see the module docstring); `baseline`: an arm or a variant (`baseline_variant`), which
    comes first."""
    runs, sql = ladder_runs(sweep, metric)
    base = baseline_variant(sweep, set(runs["variant"]), baseline)
    variants: list[str] = [base] + sorted(v for v in runs["variant"].unique() if v != base)
    names = variant_labels(sweep)
    labels = [names.get(v, v) for v in variants]
    rungs = runs.groupby("rung")["params"].median().sort_values().index.tolist()
    seeds = sorted(runs["seed"].unique().tolist())
    shape = (len(variants), len(rungs))
    loss, compute, params = np.full((*shape, len(seeds)), np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    lr, diverged = np.full(shape, np.nan), np.zeros(shape, dtype=int)
    for (variant, rung), group in runs.groupby(["variant", "rung"]):
        v, r = variants.index(variant), rungs.index(rung)
        means = group.groupby("lr")["loss"].mean()
        best = means.idxmin() if means.notna().any() else means.index[0]  # no ℓ at all (no ℓ₀ logged): any LR
        chosen = group[group["lr"] == best]
        completed = chosen[chosen["outcome"] == COMPLETED]
        for seed, value in zip(completed["seed"], completed["value"].astype(float)):
            loss[v, r, seeds.index(seed)] = value
        compute[v, r] = completed["compute"].median() if len(completed) else np.nan
        params[v, r] = chosen["params"].median()
        lr[v, r], diverged[v, r] = (best if best >= 0 else np.nan), int(chosen["diverged"].sum())
    return LadderData(variants, labels, rungs, seeds, loss, compute, params, lr, diverged, sql)


def is_ladder(sweep: Sweep) -> bool:
    """Whether some arm (variant) of the sweep has finished runs at two sizes: what makes a report show its ladder."""
    finished = sweep.finished
    present = [name for name in RUNG_FIELDS if name in finished.columns]
    if finished.empty or not present:
        return False
    variants = finished["arm"].str.split(SEPARATOR, n=1).str[0]
    return bool((finished[present].astype(str).agg(",".join, axis=1).groupby(variants).nunique() > 1).any())
