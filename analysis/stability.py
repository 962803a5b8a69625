"""Stability per arm: spikes, divergences, attention-logit peaks and output-logit growth (finished runs).

The spike score is OLMo 2's: the percentage of a run's logged training-loss values that were
`loss_spike` events, averaged over the arm's runs. Growth compares a run's last probe with its first.
"""

from __future__ import annotations

import pandas as pd

from analysis.frames import Sweep

PER_RUN = """
SELECT r.arm, r.run_id, r.status, r.diverged_at_step, coalesce(s.loss_spikes, 0) AS loss_spikes, t.steps,
    a.peak_attn_logit, a.peak_layer, o.logit_first, o.logit_last, o.log_z_first, o.log_z_last
FROM sweep_runs r
LEFT JOIN (SELECT run_id, count(*) AS loss_spikes FROM events WHERE kind = 'loss_spike' GROUP BY run_id) s USING (run_id)
LEFT JOIN (SELECT run_id, count(*) AS steps FROM metrics WHERE name = 'train_loss' GROUP BY run_id) t USING (run_id)
LEFT JOIN (SELECT run_id, max(value) AS peak_attn_logit, arg_max(layer, value) AS peak_layer
           FROM layer_metrics WHERE name = 'attn_logit_max' AND isfinite(value) GROUP BY run_id) a USING (run_id)
LEFT JOIN (SELECT run_id,
               arg_min(value, step) FILTER (WHERE name = 'output_logit_max_abs') AS logit_first,
               arg_max(value, step) FILTER (WHERE name = 'output_logit_max_abs') AS logit_last,
               arg_min(value, step) FILTER (WHERE name = 'output_log_z_mean') AS log_z_first,
               arg_max(value, step) FILTER (WHERE name = 'output_log_z_mean') AS log_z_last
           FROM metrics WHERE name IN ('output_logit_max_abs', 'output_log_z_mean') AND isfinite(value)
           GROUP BY run_id) o USING (run_id)
WHERE r.status IN ('completed', 'diverged')
"""

COLUMNS = [
    "arm", "runs", "diverged", "divergence_rate", "median_diverged_step", "loss_spikes", "spike_score",
    "peak_attn_logit", "peak_layer", "logit_growth", "log_z_growth",
]


def _per_arm(group: pd.DataFrame) -> dict:
    diverged = group[group["status"] == "diverged"]
    peak = group["peak_attn_logit"]
    return {
        "runs": len(group),
        "diverged": len(diverged),
        "divergence_rate": len(diverged) / len(group),
        "median_diverged_step": diverged["diverged_at_step"].median(),
        "loss_spikes": int(group["loss_spikes"].sum()),
        "spike_score": (100 * group["loss_spikes"] / group["steps"]).mean(),
        "peak_attn_logit": peak.max(),
        "peak_layer": group.loc[peak.idxmax(), "peak_layer"] if peak.notna().any() else pd.NA,
        "logit_growth": (group["logit_last"] / group["logit_first"]).median(),
        "log_z_growth": (group["log_z_last"] - group["log_z_first"]).mean(),
    }


def stability(sweep: Sweep) -> tuple[pd.DataFrame, str]:
    """One row per arm with `COLUMNS` (rates over the arm's finished runs at every LR)."""
    runs, text = sweep.frame(PER_RUN)
    rows = [{"arm": arm, **_per_arm(group)} for arm, group in runs.groupby("arm")]
    return pd.DataFrame(rows, columns=COLUMNS), text
