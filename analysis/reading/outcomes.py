"""What a finished run's result is, on a metric: the one rule that comparison, LR sensitivity, scale and
stability all apply (in SQL, so the queries a report shows apply it too).

- `completed`: the run completed and its metric is a finite number;
- `diverged`: it diverged, or it completed with a NaN or infinite metric (it reached the end with a broken
  model: the metric is no loss to average, and leaving the run out would hide the failure);
- NULL (left out everywhere): not finished, or completed without the metric (it was never logged: missing
  data, not a failure).
"""

from __future__ import annotations

from db.sql import quote_ident

COMPLETED, DIVERGED = "completed", "diverged"


def outcome_sql(metric: str, table: str = "") -> str:
    """A SQL expression of a `sweep_runs` row's outcome on `metric` (`table` qualifies the columns, e.g. 'r')."""
    prefix = f"{table}." if table else ""
    value = f"{prefix}{quote_ident(metric)}"
    return (
        f"CASE WHEN {prefix}status = '{DIVERGED}' "
        f"OR ({prefix}status = '{COMPLETED}' AND NOT isfinite({value}::DOUBLE)) THEN '{DIVERGED}' "
        f"WHEN {prefix}status = '{COMPLETED}' AND {value} IS NOT NULL THEN '{COMPLETED}' END"
    )
