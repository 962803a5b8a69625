"""`harness ablations`: the library of research questions in `ablations/`, with their cell counts."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    """Add `harness ablations` to the CLI."""
    parser = subparsers.add_parser("ablations", help="list the ablation library: one research question per module")
    parser.set_defaults(handler=ablations)


def ablations(args: argparse.Namespace) -> int:
    from cli.table import render_table
    from experiments import expand
    from experiments.declare.load import library_names, load_ablation

    rows = []
    for name in library_names():
        ablation, _ = load_ablation(name)
        plan = expand(ablation)
        rows.append([name, len(plan.arms), len(plan.cells), ablation.question])
    print(render_table(["ablation", "arms", "cells", "question"], rows))
    print("\nrun one: harness sweep NAME [--steps N] [--workers N]; list its cells first with --dry-run")
    return 0
