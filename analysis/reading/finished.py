"""A sweep's finished cells, read from the store and checked: the metric is a numeric outcome, the baseline an
arm, some run finished. What the comparison (`analysis.comparison`) is computed from.

Works on a `SweepSource` without pandas or scipy: `harness compare` reads the cells here in a child process (see
cli/compare.py).
"""

from __future__ import annotations

from analysis.errors import AnalysisError, closest
from analysis.reading.cells import METRIC, Cells, judged_runs
from analysis.reading.outcomes import outcome_sql
from analysis.reading.source import SweepSource
from db.sql import quote_ident
from db.views import RUNS_TRAILING

NUMERIC = ("DOUBLE", "FLOAT", "REAL", "DECIMAL", "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT", "UBIGINT",
           "UINTEGER")


def check_metric(sweep: SweepSource, metric: str) -> None:
    """AnalysisError unless `metric` is a numeric outcome column of the sweep's runs (a result of training, not
    one of its config switches such as batch_size)."""
    numeric = [name for name, kind in sweep.column_types().items()
               if kind.startswith(NUMERIC) and name in RUNS_TRAILING]
    if metric not in numeric:
        hint = closest(metric, numeric)
        raise AnalysisError(
            f"metric {metric!r} is not a numeric column of the runs view"
            + (f"; did you mean {hint!r}?" if hint else f"; metrics: {', '.join(numeric)}.")
            + (" (the spike score and the other per-arm signals: `harness summary SWEEP`)" if "spike" in metric else "")
        )


def check_finished(sweep: SweepSource) -> None:
    """AnalysisError when the sweep has no completed or diverged run yet."""
    if not sweep.n_finished_runs:
        raise AnalysisError(f"sweep {sweep.info.name!r} has no finished runs yet ({sweep.info.progress()}).")


def resolve_baseline(sweep: SweepSource, baseline: str | None) -> str:
    """The asked baseline (an arm's name or display label), else the sweep's, else an arm named 'baseline', else
    the first arm by name."""
    arms = sweep.arms
    by_label = {label: arm for arm, label in sweep.labels.items() if arm in arms}
    chosen = baseline or sweep.info.baseline or ("baseline" if "baseline" in arms else arms[0])
    chosen = chosen if chosen in arms else by_label.get(chosen, chosen)
    if chosen not in arms:
        hint = closest(chosen, arms)
        raise AnalysisError(
            f"baseline {chosen!r} is not an arm of sweep {sweep.info.name!r}"
            + (f"; did you mean {hint!r}?" if hint else f"; arms: {', '.join(map(repr, arms))}.")
        )
    return chosen


# A search's cell (trial or confirmation) has its study's LR, unless the LR is one of the tuned parameters (then
# every trial has its own). The status is the run's outcome on the metric (analysis.reading.outcomes); runs without one
# are left out. The last column marks confirmation cells (`analysis.reading.cells.judged_runs`).
CELLS_SQL = """
SELECT arm, CASE WHEN (trial IS NOT NULL OR confirms IS NOT NULL) AND json_extract(arm_values, '$.lr') IS NOT NULL
    THEN NULL ELSE lr END, seed, trial IS NOT NULL, {outcome} AS outcome, {metric}, confirms IS NOT NULL
FROM sweep_runs WHERE outcome IS NOT NULL
"""


def finished_cells(sweep: SweepSource, metric: str = METRIC, baseline: str | None = None) -> Cells:
    """The sweep's finished runs with `metric`, against the resolved baseline; AnalysisError for an unknown
    metric or baseline, or a sweep with no finished run."""
    check_metric(sweep, metric)
    check_finished(sweep)
    baseline = resolve_baseline(sweep, baseline)
    query = CELLS_SQL.format(metric=quote_ident(metric), outcome=outcome_sql(metric))
    return Cells(baseline, *judged_runs(sweep.rows(query)))
