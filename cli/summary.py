"""`harness summary`: the report's per-arm table as data: where each arm trains best, and how stably.

The analysis packages (pandas, DuckDB) are imported inside the handler so `harness --help` stays instant.
"""

from __future__ import annotations

import argparse
import sys

from cli.compare import FORMATS, format_rows, frame_rows
from cli.output import print_result

METRIC = "final_val_loss"  # = analysis.reading.cells.METRIC, without importing the analysis for --help


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "summary", help="a sweep's per-arm table: best LR, LR sensitivity, l0, divergences, spikes, logit growth",
        description="One row per arm over all its LRs: best LR and loss there, the verdict at its best LR against the "
        "baseline at its own (the report's headline; a ladder's arms at the largest rung), LR sensitivity (Wortsman et "
        "al. 2023, section 2.2) and the loss at step 0 it uses, divergence rate and median divergence step, spike "
        "score, peak max attention logit and its layer, output-logit growth.",
    )
    parser.add_argument("sweep", metavar="SWEEP", help="sweep name (`harness sweeps` lists them)")
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.add_argument("--metric", default=METRIC,
                        help=f"a numeric column of the runs view, lower is better (default: {METRIC})")
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--baseline", metavar="ARM", help="the arm the verdict column compares against (default: the "
                        "sweep's)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the per-arm table; a running sweep's is labelled partial on stderr."""
    from analysis.reading.finished import check_finished, check_metric
    from analysis.reading.frames import load_sweep
    from analysis.summary import per_arm, per_arm_verdicts

    sweep = load_sweep(args.results, args.sweep)
    check_metric(sweep, args.metric)
    check_finished(sweep)
    table, _ = per_arm(sweep, args.metric)
    # each arm at its best LR against the baseline at its own, by the rule table every verdict follows
    verdicts = per_arm_verdicts(sweep, args.metric, args.baseline)
    table["verdict"] = table["arm"].map(lambda arm: verdicts.get(arm, (None, None))[0])
    table["decided_by"] = table["arm"].map(lambda arm: verdicts.get(arm, (None, None))[1])
    table["arm"] = table["arm"].map(sweep.shown)  # by display label, where the plan gives one
    if sweep.info.running:
        print(f"harness summary: sweep {args.sweep!r} is still running: {sweep.info.progress()}", file=sys.stderr)
    print_result(format_rows(frame_rows(table), list(table.columns), args.format))
    return 0
