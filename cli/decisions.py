"""`harness decisions SWEEP…`: does the proxy decide right? For each rung of one or more ladder sweeps (their
decisions pooled), the share of the largest rung's decisions it makes the same way, with an interval, against its
share of the largest rung's compute; which decisions flip and where; the cheapest rung that decides at --target.
`harness decisions --run` runs the decision benchmark first (cli/decisions_run.py). See docs/decisions.md.

pandas and the analysis are imported inside the handler, so `harness --help` stays instant."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli.output import print_result
from cli.sweep_options import METRIC, MIN_EFFECT

FORMATS = ("table", "csv", "json")
TARGET = 0.9  # = analysis.ladder.decisions.TARGET


def register(subparsers) -> None:
    """Add `harness decisions` to the CLI."""
    parser = subparsers.add_parser(
        "decisions", help="does the proxy decide right? decision accuracy of a ladder's rungs against its largest",
        description="Per rung of one or more ladder sweeps (decisions pooled): the share of the largest rung's "
        "decisions it makes the same way, with a 95% interval, against its share of the largest rung's compute; "
        "which decisions flip and where; the cheapest rung that decides. --run: run the decision benchmark first.",
    )
    parser.add_argument("sweeps", nargs="*", metavar="SWEEP",
                        help="ladder sweeps (every pair of a sweep's arms is a decision); with --run, the "
                        "`harness sweep` options given after `--` (e.g. `-- --workers 2`)")
    parser.add_argument("--target", type=float, default=TARGET, metavar="A",
                        help=f"the decision accuracy a rung must reach with its 95%% lower bound (default: {TARGET})")
    parser.add_argument("--metric", default=METRIC,
                        help=f"a numeric column of the runs view, lower is better (default: {METRIC})")
    parser.add_argument("--min-effect", type=float, default=MIN_EFFECT, metavar="X",
                        help=f"differences whose CI lies inside ±X nats are 'negligible' (default: {MIN_EFFECT})")
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.add_argument("--export", metavar="DIR",
                        help="also write the result as Parquet into DIR: runs (one row per run), rungs, decisions, "
                        "picks")
    parser.add_argument("--run", action="store_true",
                        help="run the decision benchmark (ablations/decisions.py) first: its LR-tuning sweep at the "
                        "smallest rung, then each decision's ladder at the tuned LRs; resumable (docs/decisions.md)")
    parser.add_argument("--data", metavar="PATH", help="with --run: train on this corpus instead of the built-in one")
    parser.set_defaults(handler=run)


def check_options(args: argparse.Namespace) -> None:
    """ConfigError for a target outside (0, 1], a min-effect that is not positive, --data without --run, or no
    sweep to analyse."""
    from errors import ConfigError

    if not 0 < args.target <= 1:
        raise ConfigError(f"--target {args.target:g} is invalid: a decision accuracy, in (0, 1].")
    if not args.min_effect > 0:
        raise ConfigError(f"--min-effect {args.min_effect:g} is invalid: must be a positive number (nats).")
    if args.data is not None and not args.run:
        raise ConfigError("--data needs --run (it is the corpus the benchmark trains on).")
    if not args.run and not args.sweeps:
        raise ConfigError("give the ladder sweeps to analyse (SWEEP …), or --run to run the decision benchmark.")
    if args.export is not None and Path(args.export).exists() and not Path(args.export).is_dir():
        raise ConfigError(f"--export {args.export!r} is a file: give a folder (it is created if missing).")


def analyse(args: argparse.Namespace, sweeps: list[str]) -> int:
    """Print the decision accuracy of `sweeps` pooled; a sweep still running is named on stderr."""
    from analysis.ladder.decision_runs import decision_runs
    from analysis.ladder.decisions import decision_accuracy
    from cli.decisions_output import decisions_output

    data = decision_runs(args.results, sweeps, args.metric)
    for sweep, progress in data.partial.items():
        print(f"harness decisions: sweep {sweep!r} is still running: {progress}", file=sys.stderr)
    result = decision_accuracy(data, args.target, args.min_effect)
    if args.export is not None:
        export(result, Path(args.export))
    print_result(decisions_output(result, args.format))
    return 0


def export(result, folder: Path) -> None:
    """The runs, rungs, decisions and picks of `result` as Parquet files in `folder` (a line on stderr names them)."""
    folder.mkdir(parents=True, exist_ok=True)
    decisions = result.decisions.assign(flips_at=result.decisions["flips_at"].map(" ".join))
    tables = {"runs": result.data.runs, "rungs": result.rungs, "decisions": decisions, "picks": result.picks}
    for name, frame in tables.items():
        frame.to_parquet(folder / f"{name}.parquet", index=False)
    print(f"harness decisions: wrote {', '.join(f'{name}.parquet' for name in tables)} to {folder}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Analyse the given sweeps, or (--run) run the benchmark and then analyse its sweeps."""
    check_options(args)
    if args.run:
        from cli.decisions_run import run_benchmark

        return run_benchmark(args, lambda sweeps: analyse(args, sweeps))
    return analyse(args, args.sweeps)
