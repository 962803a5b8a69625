"""`harness compare`: each arm of a sweep against the baseline, with seed CIs, paired tests and verdicts;
with `--across FIELD`, each variant at each value of FIELD and the reversals that are resolved; with `--ladder`, a
ladder's fitted curves, extrapolations and decision consistency (cli/compare_ladder.py, which alone imports the
fitting code).

numpy and scipy are imported inside the handler so `harness --help` stays instant; pandas not at all (but
with --across, whose variants and LR curves are pandas frames). The store is read in a forked child while
scipy.stats imports (cli/forked.py).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from cli.compare_ladder import add_ladder_options, check_ladder_options
from cli.output import print_result
from cli.sweep_options import add_sweep_options

if TYPE_CHECKING:
    from analysis.comparison.row import ComparisonRow

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
                        help="add the anytime-valid test (valid however the seeds were chosen, e.g. by "
                        "--until-decided; always added to a sweep whose seeds were): its interval cs_low..cs_high, "
                        "anytime p (Holm across the table at every seed), seq_verdict and decided_at, the matched "
                        "seeds at its decision")
    parser.add_argument("--robust", action="store_true",
                        help="a loss verdict also needs the sign test (most seeds on its side), for skewed per-seed "
                        "differences; see docs/analysis.md")
    parser.add_argument("--rules", action="store_true",
                        help="print the verdict rules (the order they apply in) and exit")
    parser.add_argument("--across", metavar="FIELD",
                        help="instead, per value of FIELD (e.g. d_model): each variant at its best LR, its rank, and a "
                        "reversal column naming the orders resolved in opposite directions at two values")
    add_ladder_options(parser)
    parser.set_defaults(handler=run)


def _blank(value):
    """NaN and missing values print as empty cells (CSV, table) or null (JSON)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


class _Rounded(float):
    """A float shown to 4 significant digits; large ones (a ladder's FLOPs) in exponent form, 3.091e+15."""

    def __str__(self) -> str:
        return f"{self:.4g}" if abs(self) >= 1e6 else float.__repr__(self)


def _table(rows: Sequence[Mapping[str, Any]], columns: list[str]) -> str:
    from cli.table import render_table

    def cell(value):
        value = _blank(value)
        # 4 significant digits
        return "" if value is None else _Rounded(f"{value:.4g}") if isinstance(value, float) else value

    return render_table(columns, [[cell(row[c]) for c in columns] for row in rows])


def _csv(rows: Sequence[Mapping[str, Any]], columns: list[str]) -> str:
    sink = io.StringIO()
    writer = csv.writer(sink, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([["" if _blank(row[c]) is None else row[c] for c in columns] for row in rows])
    return sink.getvalue().rstrip("\n")


def format_rows(rows: Sequence[Mapping[str, Any]], columns: list[str], format: str) -> str:
    """Rows of plain values as a padded table, CSV or JSON (missing values: empty cells, null)."""
    if format == "csv":
        return _csv(rows, columns)
    if format == "json":
        return json.dumps([{c: _blank(row[c]) for c in columns} for row in rows])
    return _table(rows, columns)


def frame_rows(frame) -> list[dict]:
    """A pandas frame's rows as dicts of plain Python values, None where missing (NaN, NA)."""
    return [{column: None if _missing(value) else value.item() if hasattr(value, "item") else value
             for column, value in row.items()} for row in frame.to_dict("records")]


def _missing(value) -> bool:
    import pandas as pd

    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def read_cells(results_dir, sweep: str, metric: str, baseline: str | None):
    """The sweep's checked `analysis.reading.cells.Cells`, its progress line while it runs, its arms' display labels,
    how its seeds were added adaptively (None: they were not), and the line on the code that made its finished runs
    (db.provenance)."""
    from analysis.reading.finished import finished_cells
    from analysis.reading.source import open_sweep
    from db.provenance import finished_code_summary

    source = open_sweep(results_dir, sweep)
    cells = finished_cells(source, metric, baseline)
    code = finished_code_summary(source.con, "sweep_runs")
    return cells, source.info.progress() if source.info.running else None, source.labels, source.info.adaptive, code


def across(args: argparse.Namespace) -> tuple[list[dict], list[str], str | None]:
    """The --across table's rows and columns, and the sweep's progress line while it runs."""
    from analysis.ladder.across import ScaleComparison, check_across, compare_across
    from analysis.reading.finished import check_finished, check_metric
    from analysis.reading.frames import load_sweep
    from db.provenance import finished_code_summary

    sweep = load_sweep(args.results, args.sweep)
    check_metric(sweep, args.metric)
    check_finished(sweep)
    check_across(sweep, args.across)
    _say_code(finished_code_summary(sweep.con, "sweep_runs"))
    # None only when no axis is given and the sweep has no scale axis; check_across has vouched for this one.
    table = cast(ScaleComparison, compare_across(sweep, args.metric, args.across)).table
    return frame_rows(table), list(table.columns), sweep.info.progress() if sweep.info.running else None


def comparison(args: argparse.Namespace) -> tuple[list[ComparisonRow], list[str], str | None]:
    """The comparison table's rows and columns, and the sweep's progress line while it runs."""
    from cli.forked import Forked
    from errors import ConfigError

    # The store is read in a child process (DuckDB, no scipy) while this one imports scipy.stats (no DuckDB); a
    # user error found there (no such sweep, metric or baseline) cuts the import short.
    with Forked(read_cells, args.results, args.sweep, args.metric, args.baseline, expected=(ConfigError,)) as reading:
        from analysis.comparison.table import COLUMNS, comparison_table
        from analysis.reading.cells import add_selection
    cells, partial, labels, adaptive, code = reading.result()
    _say_code(code)
    rows = comparison_table(cells, args.min_effect, args.robust)
    COLUMNS = [*COLUMNS, *add_selection(rows, cells)]  # in a search: how each arm's seed outcomes were chosen
    if args.sequential or adaptive:
        from analysis.comparison.sequential_table import SEQUENTIAL_COLUMNS, add_sequential

        add_sequential(rows, cells, args.min_effect, args.robust)
        COLUMNS = [*COLUMNS, *SEQUENTIAL_COLUMNS]
    from analysis.comparison.table import bimodal_note

    note = bimodal_note(cells, lambda arm: labels.get(arm, arm))
    if note:
        print(f"harness compare: {note}", file=sys.stderr)
    if adaptive:
        print(f"harness compare: {adaptive}: read seq_verdict; verdict and p_holm are the fixed-n test's, which "
              "assumes the seed counts were fixed in advance", file=sys.stderr)
    for row in rows:  # arms by their display labels, where the plan gives them
        row["arm"] = labels.get(row["arm"], row["arm"])
    return rows, COLUMNS, partial


def _say_code(code: str | None) -> None:
    """The note on which code made the compared runs ('code: harness 0.1.0 @ 6eaecc0 (clean), torch 2.13.0, cpu')."""
    if code:
        print(f"harness compare: {code}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Print the comparison (or, with --across, the comparison per scale; with --ladder, the ladder's fits); a
    running sweep's table is labelled partial on stderr."""
    if args.rules:
        from analysis.comparison.rules import rules_text

        print_result(rules_text())
        return 0
    check_ladder_options(args)
    if args.ladder:
        from cli.compare_ladder import ladder_analysis, ladder_output

        result, partial = ladder_analysis(args)
        text = ladder_output(result, args.format)
    else:
        rows, columns, partial = across(args) if args.across is not None else comparison(args)
        text = format_rows(rows, columns, args.format)
    if partial:
        print(f"harness compare: sweep {args.sweep!r} is still running: {partial}", file=sys.stderr)
    print_result(text)
    return 0
