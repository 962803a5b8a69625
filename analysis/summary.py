"""Everything a report says about a sweep, computed once: the comparison, LR sensitivity, stability, scale."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from analysis.comparison.headline import Headline, headlines
from analysis.comparison.row import ComparisonRow
from analysis.comparison.rules import Verdict
from analysis.comparison.table import COLUMNS, COUNTS, DIRECTION, OBSERVED, comparison_table
from analysis.ladder.across import ScaleComparison, compare_across
from analysis.reading.cells import METRIC, MIN_EFFECT
from analysis.reading.finished import finished_cells
from analysis.reading.frames import Sweep
from analysis.signals.primary import COMPACT_COLUMN, SignalSummary, primary_signal, soft_caps
from analysis.signals.sensitivity import lr_sensitivity
from analysis.signals.stability import stability
from db.sql import quote_ident

if TYPE_CHECKING:
    from analysis.ladder.analyse import LadderAnalysis

# The per-arm table (`harness summary`): where each arm trains best and how stably, over all its LRs.
PER_ARM_COLUMNS = [
    "arm", "lrs", "best_lr", "best_loss", "lr_sensitivity", "initial_loss", "initial_loss_from", "runs", "diverged",
    "divergence_rate", "median_diverged_step", "loss_spikes", "spike_score", "peak_attn_logit", "peak_layer",
    "logit_growth", "log_z_growth",
]
# The report's compact per-arm table: the answer at each arm's best LR, then where and how stably it trains.
COMPACT_COLUMNS = ["arm", "verdict", "delta", "delta_ci_low", "delta_ci_high", "n", "best_lr", "lr_sensitivity",
                   "diverged", "runs", "peak_attn_logit"]


@dataclass
class Analysis:
    """One sweep analysed against its baseline on one metric."""

    sweep: Sweep
    metric: str
    baseline: str
    min_effect: float
    comparison: pd.DataFrame  # analysis.comparison.table.COLUMNS and OBSERVED, one row per (arm, lr)
    sensitivity: pd.DataFrame  # one row per arm
    stability: pd.DataFrame  # one row per arm
    scale: ScaleComparison | None  # when the sweep has a scale axis
    sql: list[str]  # the SQL behind the tables
    headlines: list[Headline]  # each arm at its best LR against the baseline at its best LR
    ladder: LadderAnalysis | None = None  # when some arm ran at several sizes (analysis.ladder)
    signal: SignalSummary | None = None  # the ablation's primary signal per arm, when it is not the loss
    soft_caps: dict[str, float] = field(default_factory=dict)  # arm → attention soft-cap (its logits are pre-cap)
    # A ladder's headline compares arms at the largest rung: each such arm → the variant name it is shown by, and
    # the rung (analysis.ladder.headline); empty for any other sweep
    headline_arms: dict[str, str] = field(default_factory=dict)
    headline_rung: str | None = None

    @property
    def headline_baseline(self) -> str:
        """The baseline as the headline names it (a ladder's: its variant)."""
        return self.headline_arms.get(self.baseline,
                                      self.baseline.split("@", 1)[0] if self.headline_arms else self.baseline)

    def per_arm(self) -> pd.DataFrame:
        """`PER_ARM_COLUMNS`, one row per arm: its LR sensitivity and stability side by side."""
        return per_arm_table(self.sensitivity, self.stability)

    def compact(self) -> pd.DataFrame:
        """`COMPACT_COLUMNS`, one row per arm (the baseline first): its headline comparison, best LR, LR
        sensitivity, divergences and peak attention logit."""
        baseline = self.headline_baseline
        rows = [{"arm": baseline, "verdict": Verdict.BASELINE}] + [{"arm": h.arm, **h.row} for h in self.headlines]
        answer = pd.DataFrame(rows).reindex(columns=["arm", "verdict", "delta", "delta_ci_low", "delta_ci_high", "n"])
        answer["n"] = answer["n"].astype("Int64")
        per_arm = self.per_arm()
        if self.headline_arms:  # a ladder: each variant's largest arm, by the variant's name
            per_arm = per_arm[per_arm["arm"].isin(self.headline_arms)]
            per_arm = per_arm.assign(arm=lambda f: f["arm"].map(self.headline_arms))
        arms = pd.DataFrame({"arm": [baseline] + [a for a in per_arm["arm"] if a != baseline]})
        return arms.merge(answer, on="arm", how="left").merge(per_arm, on="arm", how="left")[self.compact_columns]

    @property
    def compact_columns(self) -> list[str]:
        """`COMPACT_COLUMNS`, led by the primary signal's column when the question is not about the loss."""
        lead = COMPACT_COLUMN.get(self.signal.name) if self.signal is not None else None
        return COMPACT_COLUMNS if lead is None else ["arm", lead,
                                                     *(c for c in COMPACT_COLUMNS if c not in ("arm", lead))]


def comparison_frame(rows: list[ComparisonRow], extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """`compare`'s rows as a frame with its COLUMNS, OBSERVED, DIRECTION and `extra` columns (counts nullable
    integers, survivors_only nullable)."""
    frame = pd.DataFrame(rows, columns=[*COLUMNS, OBSERVED, DIRECTION, *extra])
    for column in ("seeds", DIRECTION, *COUNTS):
        frame[column] = frame[column].astype("Int64")
    frame["survivors_only"] = frame["survivors_only"].astype("boolean")
    return frame


def analyse(sweep: Sweep, metric: str = METRIC, baseline: str | None = None,
            min_effect: float = MIN_EFFECT) -> Analysis:
    """Run every analysis of `sweep` (AnalysisError for an unknown metric or baseline, or no finished runs)."""
    cells = finished_cells(sweep, metric, baseline)
    comparison = comparison_frame(*_table_rows(cells, min_effect, bool(sweep.info.adaptive)))
    sensitivity, sensitivity_sql = lr_sensitivity(sweep, metric)
    stable, stability_sql = stability(sweep, metric)
    best_lr = dict(zip(sensitivity["arm"], sensitivity["best_lr"]))
    comparison_sql = sweep.sql(f"SELECT arm, lr, seed, status, {quote_ident(metric)} FROM sweep_runs ORDER BY arm, lr, "
                               "seed")
    signal = primary_signal(sweep, metric, cells.baseline, sensitivity)
    lines, arms, rung = judged_headlines(sweep, cells, best_lr, min_effect)
    return Analysis(
        sweep, metric, cells.baseline, min_effect, comparison, sensitivity, stable, compare_across(sweep, metric),
        [comparison_sql, *sensitivity_sql, stability_sql, *([signal.sql] if signal is not None and signal.sql else [])],
        lines, ladder_of(sweep, metric, cells.baseline), signal, soft_caps(sweep), arms, rung,
    )


def judged_headlines(sweep: Sweep, cells, best_lr: dict,
                     min_effect: float) -> tuple[list[Headline], dict[str, str], str | None]:
    """The headline rows as the answer judges them (`analysis.comparison.headline`: each arm at its best LR, the
    anytime-valid table after adaptive seeding; a ladder's arms at its largest rung), each such arm → the name it is
    shown by (a ladder's variant; empty otherwise), and a ladder's largest rung."""
    from analysis.ladder.points import is_ladder

    judged, judged_lr, arms, rung = cells, best_lr, dict[str, str](), None
    if is_ladder(sweep):
        from analysis.ladder.headline import largest_rung

        judged, judged_lr, rung, arms = largest_rung(sweep, cells, best_lr)
    return headlines(judged, judged_lr, min_effect, bool(sweep.info.adaptive)), arms, rung


def per_arm_verdicts(sweep: Sweep, metric: str = METRIC, baseline: str | None = None,
                     min_effect: float = MIN_EFFECT) -> dict[str, tuple[Verdict, str | None]]:
    """arm (as the per-arm table names it) → its headline verdict against the baseline and the test that decided:
    `harness summary`'s verdict columns, by the one rule table."""
    cells = finished_cells(sweep, metric, baseline)
    sensitivity, _ = lr_sensitivity(sweep, metric)
    lines, arms, _ = judged_headlines(sweep, cells, dict(zip(sensitivity["arm"], sensitivity["best_lr"])), min_effect)
    by_name = {line.arm: (line.row["verdict"], line.row.get("decided_by")) for line in lines}
    if not arms:
        return by_name | {cells.baseline: (Verdict.BASELINE, None)}
    baseline = cells.baseline.split("@", 1)[0]
    return {arm: (Verdict.BASELINE, None) if name == baseline else by_name[name] for arm, name in arms.items()
            if name == baseline or name in by_name}


def _table_rows(cells, min_effect: float, adaptive: bool) -> tuple[list[ComparisonRow], tuple[str, ...]]:
    """The rows by arm and LR; after adaptive seeding with the anytime-valid table's columns beside them."""
    rows = comparison_table(cells, min_effect)
    if not adaptive:
        return rows, ()
    from analysis.comparison.sequential_table import SEQUENTIAL_COLUMNS, add_sequential

    add_sequential(rows, cells, min_effect)
    return rows, tuple(SEQUENTIAL_COLUMNS)


def ladder_of(sweep: Sweep, metric: str, baseline: str) -> LadderAnalysis | None:
    """The sweep's ladder analysis when it is a ladder (the fitting code is imported only then)."""
    from analysis.ladder.points import is_ladder

    if not is_ladder(sweep):
        return None
    from analysis.ladder.analyse import analyse_ladder

    return analyse_ladder(sweep, metric, baseline)


def per_arm_table(sensitivity: pd.DataFrame, stable: pd.DataFrame) -> pd.DataFrame:
    """`PER_ARM_COLUMNS` from the LR sensitivity and stability tables (one row per arm each)."""
    merged = sensitivity.merge(stable, on="arm", how="outer")
    merged["peak_layer"] = merged["peak_layer"].astype("Int64")
    return merged[PER_ARM_COLUMNS]


def per_arm(sweep: Sweep, metric: str = METRIC) -> tuple[pd.DataFrame, list[str]]:
    """The per-arm table alone (`harness summary`: no baseline, no comparison) and the SQL behind it."""
    sensitivity, sensitivity_sql = lr_sensitivity(sweep, metric)
    stable, stability_sql = stability(sweep, metric)
    return per_arm_table(sensitivity, stable), [*sensitivity_sql, stability_sql]
