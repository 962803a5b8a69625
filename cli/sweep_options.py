"""Options shared by the commands that analyse a sweep (`harness compare`, `plot`, `report`)."""

from __future__ import annotations

import argparse

METRIC = "final_val_loss"  # = analysis.reading.cells.METRIC, without importing pandas for --help
MIN_EFFECT = 0.01  # = analysis.reading.cells.MIN_EFFECT


def add_sweep_options(parser: argparse.ArgumentParser, min_effect: bool = True) -> None:
    """SWEEP, --results, --metric, --baseline (and --min-effect)."""
    parser.add_argument("sweep", metavar="SWEEP", help="sweep name (`harness sweeps` lists them)")
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.add_argument("--metric", default=METRIC,
                        help=f"a numeric column of the runs view, lower is better (default: {METRIC})")
    parser.add_argument("--baseline", metavar="ARM",
                        help="arm to compare against (default: the sweep's baseline, else an arm named 'baseline', "
                        "else the first arm)")
    if min_effect:
        parser.add_argument("--min-effect", type=float, default=MIN_EFFECT, metavar="X",
                            help=f"differences whose CI lies inside ±X nats are 'negligible' (default: {MIN_EFFECT})")
