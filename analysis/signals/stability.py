"""Stability per arm: spikes, divergences, attention-logit peaks and output-logit growth (runs with an outcome).

A run's outcome is the one of `analysis.reading.outcomes` (a completed run whose metric is not finite counts as a
divergence, as in the comparison and the LR sensitivity). The spike score is OLMo 2's, the percentage of the
run's *trained steps* that were loss spikes (every step is judged, logged or not): the run summary's
`loss_spike_score`, else, for a run written without one, its `loss_spike` events over its last step; never
over logged rows, which with log_every > 1 are a fraction of the steps. Averaged over the arm's runs.
Growth compares a run's last probe with its first.
"""

from __future__ import annotations

import pandas as pd

from analysis.reading.cells import METRIC
from analysis.reading.frames import Sweep
from analysis.reading.outcomes import DIVERGED, outcome_sql

PER_RUN = """
SELECT r.arm, r.run_id, {outcome} AS outcome, r.diverged_at_step, coalesce(s.loss_spikes, 0) AS loss_spikes,
    coalesce(TRY_CAST(json_extract_string(r.summary, '$.loss_spike_score') AS DOUBLE),
             100.0 * coalesce(s.loss_spikes, 0) / nullif(r.last_step, 0)) AS spike_score,
    a.peak_attn_logit, a.peak_layer, o.logit_first, o.logit_last, o.log_z_first, o.log_z_last
FROM sweep_runs r
LEFT JOIN (SELECT run_id, count(*) AS loss_spikes FROM events WHERE kind = 'loss_spike' GROUP BY run_id) s
    USING (run_id)
LEFT JOIN (SELECT run_id, max(value) AS peak_attn_logit, arg_max(layer, value) AS peak_layer
           FROM layer_metrics WHERE name = 'attn_logit_max' AND isfinite(value) GROUP BY run_id) a USING (run_id)
LEFT JOIN (SELECT run_id,
               arg_min(value, step) FILTER (WHERE name = 'output_logit_max_abs') AS logit_first,
               arg_max(value, step) FILTER (WHERE name = 'output_logit_max_abs') AS logit_last,
               arg_min(value, step) FILTER (WHERE name = 'output_log_z_mean') AS log_z_first,
               arg_max(value, step) FILTER (WHERE name = 'output_log_z_mean') AS log_z_last
           FROM metrics WHERE name IN ('output_logit_max_abs', 'output_log_z_mean') AND isfinite(value)
           GROUP BY run_id) o USING (run_id)
WHERE outcome IS NOT NULL
"""

COLUMNS = [
    "arm", "runs", "diverged", "divergence_rate", "median_diverged_step", "loss_spikes", "spike_score",
    "peak_attn_logit", "peak_layer", "logit_growth", "log_z_growth",
]


def _per_arm(group: pd.DataFrame) -> dict:
    diverged = group[group["outcome"] == DIVERGED]
    peak = group["peak_attn_logit"]
    return {
        "runs": len(group),
        "diverged": len(diverged),
        "divergence_rate": len(diverged) / len(group),
        "median_diverged_step": diverged["diverged_at_step"].median(),
        "loss_spikes": int(group["loss_spikes"].sum()),
        "spike_score": group["spike_score"].mean(),
        "peak_attn_logit": peak.max(),
        "peak_layer": group.loc[peak.idxmax(), "peak_layer"] if peak.notna().any() else pd.NA,
        "logit_growth": (group["logit_last"] / group["logit_first"]).median(),
        "log_z_growth": (group["log_z_last"] - group["log_z_first"]).mean(),
    }


def stability(sweep: Sweep, metric: str = METRIC) -> tuple[pd.DataFrame, str]:
    """One row per arm with `COLUMNS` (rates over the arm's runs with an outcome on `metric`, at every LR)."""
    runs, text = sweep.frame(PER_RUN.format(outcome=outcome_sql(metric, "r")))
    rows = [{"arm": arm, **_per_arm(group)} for arm, group in runs.groupby("arm")]
    return pd.DataFrame(rows, columns=COLUMNS), text
