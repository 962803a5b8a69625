"""`harness sweep --dry-run`: every cell with its key, size, cost and whether it is already finished, and
an estimate of the sweep's time."""

from __future__ import annotations

import os
from pathlib import Path

from cli.table import render_table

# With no finished run in the store to measure from: the wall-time FLOP rate of one worker of the README's
# sweep (qk_stability: tiny, CPU_PROXY, 2 workers on an idle 2-core machine, 2.2e10 measured; docs/benchmarks.md).
# A run's own wall time (what a rate covers) starts at its set-up; between two runs a warm worker spends
# 0.04 s, and a launch pays its workers' start and its closing once (docs/benchmarks.md, "Start-up").
DEFAULT_FLOPS_PER_SECOND = 2e10
CELL_OVERHEAD_S = 0.1
LAUNCH_OVERHEAD_S = 5.0


def measured_rate(results_dir: Path) -> float | None:
    """Median FLOP/s of the store's completed runs over their whole wall time (training FLOPs of the steps
    trained, over started → finished: validation, probes and checkpoints included), or None."""
    import db

    try:
        rows = db.connect(results_dir).execute(
            "SELECT last_step * (config->>'$.batch_size')::BIGINT * (config->>'$.seq_len')::BIGINT "
            "* coalesce((config->>'$.grad_accum')::BIGINT, 1) * flops_per_token "
            "/ epoch(finished_at - started_at) FROM runs WHERE status = 'completed' AND n_segments = 1 "
            "AND finished_at > started_at AND last_step > 0"
        ).fetchall()
    except db.NoResultsError:
        return None
    rates = sorted(rate for (rate,) in rows if rate and rate > 0)
    return rates[len(rates) // 2] if rates else None


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def _spread(values: list[float], fmt: str) -> str:
    """One value, or the range of a rung's cells (arms with their own budgets differ)."""
    low, high = min(values), max(values)
    return format(low, fmt) if low == high else f"{low:{fmt}}–{high:{fmt}}"


def print_ladder(plan) -> None:
    """A ladder's rungs: their values, the base model's parameters, tokens and FLOPs per cell, cells, and the
    compute of each rung and of the whole ladder (all seeds and LRs)."""
    axes = list(plan.ablation.ladder.axes)
    rows, spent = [], []
    for rung in plan.rungs:
        cells = [cell for cell in plan.cells if plan.arm_rungs[cell.arm] == rung.index]
        tokens = [cell.train.steps * cell.train.tokens_per_step for cell in cells]
        flops = [t * cell.flops_per_token for t, cell in zip(tokens, cells)]
        spent.append(sum(flops))
        rows.append([rung.index, *rung.values.values(), rung.params, _spread(tokens, ".3g"), _spread(flops, ".3g"),
                     len(cells), f"{sum(flops):.3g}"])
    print("\n" + render_table(["rung", *axes, "params", "tokens/cell", "FLOPs/cell", "cells", "FLOPs"], rows))
    print(f"ladder: {len(plan.rungs)} rungs, {sum(spent):.3g} training FLOPs in all "
          f"({spent[-1] / sum(spent):.0%} of it in the largest rung).")


def print_dry_run(plan, results_dir: Path, workers: int) -> None:
    """Print the cells and the estimate; nothing is written."""
    import db

    rows, seconds, done = [], 0.0, 0
    rate = measured_rate(results_dir) if results_dir.is_dir() else None
    runs = results_dir / "runs"
    stored = set(os.listdir(runs)) if runs.is_dir() else set()  # one listing, not a lookup per cell
    for cell in plan.cells:
        finished = db.run_state(results_dir, cell.run_id).result if cell.run_id in stored else None
        done += finished is not None
        tokens = cell.train.steps * cell.train.tokens_per_step
        if finished is None:
            seconds += tokens * cell.flops_per_token / (rate or DEFAULT_FLOPS_PER_SECOND) + CELL_OVERHEAD_S
        residual = "" if cell.matched_residual is None else cell.matched_residual
        rows.append([cell.index, cell.arm, f"{cell.lr:g}", cell.seed, cell.run_id, cell.params,
                     f"{cell.flops_per_token:.3g}", cell.train.steps, residual, finished or "no"])
    print(render_table(["cell", "arm", "lr", "seed", "key", "params", "flops/token", "steps", "matched residual",
                        "done"], rows))
    if plan.rungs:
        print_ladder(plan)
    if plan.studies:
        space = ", ".join(plan.ablation.tune)
        confirm = (f", then its chosen configuration on {plan.ablation.confirm_seeds} fresh seeds"
                   if plan.ablation.confirm_seeds else "")
        print(f"\nsearches: each row above is the base of one Optuna study of {plan.ablation.trials} trials over "
              f"{space}{confirm}; the estimate below counts the trials and confirmations.")
        seconds *= plan.ablation.trials + plan.ablation.confirm_seeds
    basis = ("measured from this store's finished runs" if rate
             else f"assuming {DEFAULT_FLOPS_PER_SECOND:.0e} FLOP/s per worker")
    estimate = seconds / workers + (LAUNCH_OVERHEAD_S if done < len(plan.cells) else 0.0)
    print(f"\n{plan.name}: {len(plan.cells)} cells, {len(plan.arms)} arms, baseline {plan.baseline!r}; {done} already "
          f"finished. Estimated time with {workers} worker(s): {_duration(estimate)} ({basis}).")
