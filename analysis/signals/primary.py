"""The signal an ablation's question is about (`Ablation(primary=...)`, db.sweeps.SIGNALS), summarized per arm so
that the report's answer can lead with it: a stability question is answered by divergences and attention logits,
not by the loss at the best LR.

- `attn_logit`: each run's peak attention logit (max over layers, heads and probe steps, the `layer_metrics`
  `attn_logit_max` the telemetry records); per arm at its largest LR, where growth shows first, the median over
  seeds and their range. It is the logit *before* any soft-cap: with `attn_softcap = c` softmax sees
  c·tanh(z/c), at most c, so a capped arm's number is labelled pre-cap;
- `divergence`: each arm's diverged runs over its runs, in all and at its largest LR;
- `lr_sensitivity`: the LR sensitivity of `analysis.signals.sensitivity` and the best LR;
- `loss`: the comparison itself (nothing to add).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from analysis.reading.frames import Sweep
from analysis.reading.outcomes import DIVERGED, outcome_sql

LABELS = {"loss": "the loss", "divergence": "divergence", "attn_logit": "the peak attention logit",
          "lr_sensitivity": "LR sensitivity"}
COMPACT_COLUMN = {"divergence": "diverged", "attn_logit": "peak_attn_logit", "lr_sensitivity": "lr_sensitivity"}

PER_RUN = """
SELECT r.arm, r.lr, r.seed, {outcome} AS outcome, a.peak, {cap} AS softcap
FROM sweep_runs r
LEFT JOIN (SELECT run_id, max(value) AS peak FROM layer_metrics
           WHERE name = 'attn_logit_max' AND isfinite(value) GROUP BY run_id) a USING (run_id)
WHERE outcome IS NOT NULL
"""


@dataclass(frozen=True)
class ArmSignal:
    """One arm's summary of the signal: the value shown, its seed range, and where it was read."""

    arm: str
    value: float
    low: float
    high: float
    runs: int
    lr: float | None
    pre_cap: float | None  # the arm's attention soft-cap, when its logits are read before it


@dataclass(frozen=True)
class SignalSummary:
    """The primary signal of a sweep, per arm (the baseline first), and the SQL behind it."""

    name: str
    arms: list[ArmSignal]
    sql: str

    @property
    def label(self) -> str:
        return LABELS[self.name]


def _largest_lr(group: pd.DataFrame) -> pd.DataFrame:
    lrs = pd.to_numeric(group["lr"], errors="coerce")
    return group[lrs == lrs.max()] if lrs.notna().any() else group


def _attn(arm: str, group: pd.DataFrame) -> ArmSignal | None:
    at = _largest_lr(group)
    peaks = at["peak"].dropna()
    if peaks.empty:
        return None
    cap = at["softcap"].dropna()
    return ArmSignal(arm, float(peaks.median()), float(peaks.min()), float(peaks.max()), len(peaks),
                     _lr(at), float(cap.iloc[0]) if len(cap) else None)


def _divergence(arm: str, group: pd.DataFrame) -> ArmSignal:
    gone = (group["outcome"] == DIVERGED)
    at = _largest_lr(group)
    at_gone = (at["outcome"] == DIVERGED)
    return ArmSignal(arm, float(gone.sum()), float(at_gone.sum()), float(len(at)), len(group), _lr(at), None)


def _lr(frame: pd.DataFrame) -> float | None:
    lrs = pd.to_numeric(frame["lr"], errors="coerce").dropna()
    return float(lrs.iloc[0]) if len(lrs) else None


def primary_signal(sweep: Sweep, metric: str, baseline: str, sensitivity: pd.DataFrame) -> SignalSummary | None:
    """The sweep's primary signal per arm, or None when the question is about the loss (or nothing was logged)."""
    name = sweep.info.primary or "loss"
    if name == "loss":
        return None
    if name == "lr_sensitivity":
        arms = [ArmSignal(row.arm, float(row.lr_sensitivity), math.nan, math.nan, 0, row.best_lr, None)
                for row in sensitivity.itertuples()]
        return SignalSummary(name, _baseline_first(arms, baseline), "")
    cap = "TRY_CAST(r.attn_softcap AS DOUBLE)" if "attn_softcap" in sweep.column_types() else "NULL::DOUBLE"
    runs, sql = sweep.frame(PER_RUN.format(outcome=outcome_sql(metric, "r"), cap=cap))
    summarize = _attn if name == "attn_logit" else _divergence
    arms = [found for arm, group in runs.groupby("arm") if (found := summarize(arm, group)) is not None]
    return SignalSummary(name, _baseline_first(arms, baseline), sql) if arms else None


def soft_caps(sweep: Sweep) -> dict[str, float]:
    """arm → its attention soft-cap, for the arms that have one (their logged attention logits are pre-cap)."""
    if "attn_softcap" not in sweep.column_types():
        return {}
    rows = sweep.rows("SELECT arm, max(TRY_CAST(attn_softcap AS DOUBLE)) FROM sweep_runs GROUP BY arm")
    return {arm: float(cap) for arm, cap in rows if cap is not None}


def _baseline_first(arms: list[ArmSignal], baseline: str) -> list[ArmSignal]:
    return sorted(arms, key=lambda signal: (signal.arm != baseline, signal.arm))
