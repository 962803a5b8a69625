"""`harness compare`: each arm of a sweep against the baseline, with seed CIs, paired tests and verdicts.

numpy and scipy are imported inside the handler so `harness --help` stays instant; pandas not at all.
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


def run(args: argparse.Namespace) -> int:
    """Print the comparison; a running sweep's table is labelled partial on stderr."""
    import threading

    from analysis.source import open_sweep

    # scipy.stats takes ~0.9 s to import; overlap it with reading the store (DuckDB releases the GIL).
    importer = threading.Thread(target=lambda: __import__("analysis.compare"), daemon=True)
    importer.start()
    sweep = open_sweep(args.results, args.sweep)
    importer.join()
    from analysis.compare import COLUMNS, compare

    rows = compare(sweep, args.metric, args.baseline, args.min_effect)
    if sweep.info.running:
        print(f"harness compare: sweep {args.sweep!r} is still running: {sweep.info.progress()}", file=sys.stderr)
    if args.format == "csv":
        print_result(_csv(rows, COLUMNS))
    elif args.format == "json":
        print_result(json.dumps([{c: _blank(row[c]) for c in COLUMNS} for row in rows]))
    else:
        print_result(_table(rows, COLUMNS))
    return 0
