"""`harness compare SWEEP --ladder`: each arm's fitted scaling curve, its predicted loss at a target with an
interval, its gap to the baseline there, where its curve crosses the baseline's, and how often each smaller
rung's decisions match the largest rung's. The fitting code (analysis.ladder, pandas) is imported here only."""

from __future__ import annotations

import argparse
import json

from errors import ConfigError

# What the table shows of analysis.ladder.extrapolate.COLUMNS (CSV and JSON carry them all).
TABLE_COLUMNS = ["arm", "rungs", "seeds", "diverged", "best_lrs", "E", "alpha", "predicted", "low", "high", "gap",
                 "gap_low", "gap_high", "crossover", "cross_low", "cross_high", "crosses", "note"]


def add_ladder_options(parser: argparse.ArgumentParser) -> None:
    """--ladder, --target-flops, --target-params."""
    parser.add_argument("--ladder", action="store_true",
                        help="a ladder sweep's fitted curves L = E + A·C^-α per arm, extrapolated to a target with "
                        "bootstrap intervals, gaps to the baseline, crossovers, and each rung's decision consistency")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--target-flops", type=float, metavar="X",
                        help="with --ladder: extrapolate the fits against training compute to X FLOPs (default: 100× "
                        "the largest rung)")
    target.add_argument("--target-params", type=float, metavar="N",
                        help="with --ladder: extrapolate the fits against parameters to N parameters instead")


def check_ladder_options(args: argparse.Namespace) -> None:
    """ConfigError for a target without --ladder, --ladder with another mode, or a target that is not positive."""
    given = [f"--{name.replace('_', '-')}" for name in ("target_flops", "target_params")
             if getattr(args, name) is not None]
    if given and not args.ladder:
        raise ConfigError(f"{given[0]} needs --ladder (it is where the ladder's fits are extrapolated to).")
    if args.ladder and (args.across is not None or args.sequential):
        raise ConfigError(f"--ladder and {'--across' if args.across is not None else '--sequential'}: give one.")
    check_targets(args)


def check_targets(args: argparse.Namespace) -> None:
    """ConfigError for a --target-flops or --target-params that is not a positive number (compare and plot)."""
    for name in ("target_flops", "target_params"):
        value = getattr(args, name)
        if value is not None and not value > 0:
            raise ConfigError(f"--{name.replace('_', '-')} {value:g} is invalid: it must be a positive number.")


def ladder_analysis(args: argparse.Namespace):
    """The sweep's `analysis.ladder.LadderAnalysis` (AnalysisError for an unknown sweep, metric or baseline, a
    sweep that is not a ladder, or a target inside the ladder) and its progress line while it runs."""
    from analysis.ladder.analyse import analyse_ladder
    from analysis.reading.finished import check_finished, check_metric
    from analysis.reading.frames import load_sweep

    sweep = load_sweep(args.results, args.sweep)
    check_metric(sweep, args.metric)
    check_finished(sweep)
    result = analyse_ladder(sweep, args.metric, args.baseline, args.target_flops, args.target_params, axes=())
    return result, sweep.info.progress() if sweep.info.running else None


def ladder_output(analysis, format: str) -> str:
    """The extrapolation and decision-consistency tables: a headed table each, two CSV blocks separated by a
    blank line, or one JSON object {target, arms, consistency}."""
    from analysis.ladder.consistency import COLUMNS as CONSISTENCY
    from analysis.ladder.extrapolate import COLUMNS
    from cli.compare import format_rows, frame_rows

    arms, consistency = frame_rows(analysis.table), frame_rows(analysis.consistency)
    if format == "json":
        target = {"axis": analysis.target.axis, "value": analysis.target.value, "given": analysis.target.given}
        return json.dumps({"target": target, "arms": json.loads(format_rows(arms, COLUMNS, "json")),
                           "consistency": json.loads(format_rows(consistency, CONSISTENCY, "json"))})
    if format == "csv":
        return format_rows(arms, COLUMNS, "csv") + "\n\n" + format_rows(consistency, CONSISTENCY, "csv")
    data, pairs = analysis.data, f"{analysis.decided} pair{'' if analysis.decided == 1 else 's'}"
    return (f"Ladder: {len(data.variants)} arms at {len(data.rungs)} rungs ({data.rungs[0]} … {data.rungs[-1]}); "
            f"baseline {data.labels[0]}; fits of {analysis.fit.axis} extrapolated to {analysis.target.describe()}.\n"
            f"{format_rows(arms, TABLE_COLUMNS, 'table')}\n\n"
            f"Decision consistency: of the {pairs} of arms whose order the largest rung resolves, the share each "
            "smaller rung orders the same way (DataDecide's pairwise decision accuracy).\n"
            f"{format_rows(consistency, CONSISTENCY, 'table')}")
