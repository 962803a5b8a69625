"""`harness sweeps`: every sweep in the results store with its progress (from the `sweeps` view)."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    """Add `harness sweeps` to the CLI."""
    parser = subparsers.add_parser("sweeps", help="list the sweeps in the results store and their progress")
    parser.add_argument("--results", metavar="DIR", help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.set_defaults(handler=sweeps)


def sweeps(args: argparse.Namespace) -> int:
    import db
    from cli.table import render_table
    from harness.config.base import ConfigError

    try:
        con = db.connect(args.results)
    except db.DbError as err:
        raise ConfigError(str(err)) from None
    columns = ["sweep", "n_cells", "completed", "diverged", "failed", "running", "pending", "question"]
    rows = con.execute(f"SELECT {', '.join(columns)} FROM sweeps ORDER BY sweep").fetchall()
    if not rows:
        print("no sweeps yet: run one with `harness sweep ABLATION` (see `harness ablations`).")
        return 0
    print(render_table(["sweep", "cells", "completed", "diverged", "failed", "running", "left", "question"],
                       [[*row[:-1], row[-1] or ""] for row in rows]))
    return 0
