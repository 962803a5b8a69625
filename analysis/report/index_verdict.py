"""A sweep's headline verdict in one line, for the dashboard's index: what the report leads with (the winning arm,
or that no arm is resolved better), computed as the report computes it (`analysis.comparison.headline`, each arm at its
best LR against the baseline at its best LR; a ladder's arms at its largest rung) on the report's default metric."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from analysis.errors import AnalysisError
from analysis.reading.cells import METRIC, MIN_EFFECT
from db.errors import DbError
from errors import ConfigError

WINNER, NONE, WAITING, UNKNOWN = "winner", "none", "waiting", "unknown"


@dataclass(frozen=True)
class IndexVerdict:
    """`kind`: WINNER (`arm` is resolved better than the baseline by the most), NONE (no arm is), WAITING (nothing to
    compare yet) or UNKNOWN (the sweep cannot be read); `text`: one line; `detail`: the interval and the test."""

    kind: str
    text: str
    arm: str | None = None
    detail: str = ""


def _g(value) -> str:
    return f"{float(value):.3g}"


def sweep_verdict(results_dir, sweep: str, metric: str = METRIC, min_effect: float = MIN_EFFECT) -> IndexVerdict:
    """The sweep's headline verdict (never raises for a sweep it cannot judge: says why instead)."""
    from analysis.comparison.headline import winner
    from analysis.reading.finished import finished_cells
    from analysis.reading.frames import load_sweep
    from analysis.signals.sensitivity import lr_sensitivity
    from analysis.summary import judged_headlines

    try:
        data = load_sweep(results_dir, sweep)
        if data.finished.empty:
            return IndexVerdict(WAITING, "no finished run yet")
        cells = finished_cells(data, metric)
        sensitivity, _ = lr_sensitivity(data, metric)
        best_lr = dict(zip(sensitivity["arm"], sensitivity["best_lr"]))
        lines, _, rung = judged_headlines(data, cells, best_lr, min_effect)
    except (AnalysisError, ConfigError, DbError) as err:  # a damaged file, a metric no run logged, …
        return IndexVerdict(UNKNOWN, "cannot judge", detail=str(err))
    at = f" at the largest rung ({rung})" if rung is not None else ""
    if not lines:
        return IndexVerdict(WAITING, "only the baseline has finished runs")
    best = winner(lines)
    if best is None:
        counts = Counter(str(line.row["verdict"]) for line in lines)
        tally = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
        return IndexVerdict(NONE, f"no arm resolved better{at} ({tally})")
    row = best.row
    interval = "95% confidence sequence" if best.anytime else "95% CI"
    detail = f"{interval} [{_g(row['delta_ci_low'])}, {_g(row['delta_ci_high'])}]; {row.get('decided_by') or ''}"
    return IndexVerdict(WINNER, f"{data.shown(best.arm)} wins{at}: {_g(row['delta'])} nats", best.arm, detail)
