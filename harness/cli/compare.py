"""`harness compare`: each arm of a sweep against the baseline, with seed CIs, paired tests and verdicts.

numpy and scipy are imported inside the handler so `harness --help` stays instant; pandas not at all. The
store is read in a forked child while scipy.stats imports (harness/cli/forked.py).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
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
    parser.add_argument("--sequential", action="store_true",
                        help="add the anytime-valid test (valid however the seeds were chosen, e.g. by --until-decided): "
                        "its interval cs_low..cs_high, seq_verdict and decided_at, the matched seeds at its first decision")
    parser.set_defaults(handler=run)


def _blank(value):
    """NaN and missing values print as empty cells (CSV, table) or null (JSON)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _table(rows: list[dict], columns: list[str]) -> str:
    from harness.cli.table import render_table

    def cell(value):
        value = _blank(value)
        return "" if value is None else float(f"{value:.4g}") if isinstance(value, float) else value  # 4 significant digits

    return render_table(columns, [[cell(row[c]) for c in columns] for row in rows])


def _csv(rows: list[dict], columns: list[str]) -> str:
    sink = io.StringIO()
    writer = csv.writer(sink, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([["" if _blank(row[c]) is None else row[c] for c in columns] for row in rows])
    return sink.getvalue().rstrip("\n")


def read_cells(results_dir, sweep: str, metric: str, baseline: str | None):
    """The sweep's checked `analysis.cells.Cells` and, while it runs, its progress line."""
    from analysis.compare import finished_cells
    from analysis.source import open_sweep

    source = open_sweep(results_dir, sweep)
    cells = finished_cells(source, metric, baseline)
    return cells, source.info.progress() if source.info.running else None


def run(args: argparse.Namespace) -> int:
    """Print the comparison; a running sweep's table is labelled partial on stderr."""
    from harness.cli.forked import Forked
    from harness.config.base import ConfigError

    # The store is read in a child process (DuckDB, no scipy) while this one imports scipy.stats (no DuckDB).
    with Forked(read_cells, args.results, args.sweep, args.metric, args.baseline, expected=(ConfigError,)) as reading:
        from analysis.comparison import COLUMNS, comparison_table

        cells, partial = reading.result()
    rows = comparison_table(cells, args.min_effect)
    if args.sequential:
        from analysis.sequential_columns import SEQUENTIAL_COLUMNS, add_sequential

        add_sequential(rows, cells, args.min_effect)
        COLUMNS = [*COLUMNS, *SEQUENTIAL_COLUMNS]
    if partial:
        print(f"harness compare: sweep {args.sweep!r} is still running: {partial}", file=sys.stderr)
    if args.format == "csv":
        print_result(_csv(rows, COLUMNS))
    elif args.format == "json":
        print_result(json.dumps([{c: _blank(row[c]) for c in COLUMNS} for row in rows]))
    else:
        print_result(_table(rows, COLUMNS))
    return 0
