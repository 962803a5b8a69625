"""`harness compare`: each arm of a sweep against the baseline, with seed CIs, paired tests and verdicts.

pandas and scipy are imported inside the handler so `harness --help` stays instant.
"""

from __future__ import annotations

import argparse
import sys

from harness.cli.output import print_result
from harness.cli.sweep_options import add_sweep_options

FORMATS = ("table", "csv", "json")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare a sweep's arms against its baseline: CIs, paired tests, verdicts",
        description="One row per arm (and LR): mean over seeds with a 95%% t-interval, the paired difference from "
        "the baseline on matched seeds, Holm-adjusted p, a verdict and the seeds needed to resolve --min-effect.",
    )
    add_sweep_options(parser)
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.set_defaults(handler=run)


def _table(frame) -> str:
    import pandas as pd

    from harness.cli.table import render_table

    def cell(value):
        if pd.isna(value):  # NaN and NA print as empty cells
            return ""
        return float(f"{value:.4g}") if isinstance(value, float) else value  # 4 significant digits, still a number

    return render_table(list(frame.columns), [[cell(v) for v in row] for row in frame.astype(object).itertuples(index=False)])


def run(args: argparse.Namespace) -> int:
    """Print the comparison; a running sweep's table is labelled partial on stderr."""
    from analysis.compare import compare
    from analysis.frames import load_sweep

    sweep = load_sweep(args.results, args.sweep)
    frame = compare(sweep, args.metric, args.baseline, args.min_effect)
    if sweep.info.running:
        print(f"harness compare: sweep {args.sweep!r} is still running: {sweep.info.progress()}", file=sys.stderr)
    if args.format == "csv":
        print_result(frame.to_csv(index=False).rstrip("\n"))
    elif args.format == "json":
        print_result(frame.to_json(orient="records", double_precision=15))
    else:
        print_result(_table(frame))
    return 0
