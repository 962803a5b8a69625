"""`harness export`: a sweep's runs into TensorBoard, W&B or MLflow, written offline (docs/export.md).

The export package and the tracker libraries are imported inside the handler so `harness --help` stays instant.
"""

from __future__ import annotations

import argparse

TRACKERS = ("tensorboard", "wandb", "mlflow")  # = analysis.export.TRACKERS, without importing the store for --help


def register(subparsers) -> None:
    """Add `harness export` to the CLI."""
    parser = subparsers.add_parser(
        "export", help="write a sweep's runs as TensorBoard event files, W&B offline runs or an MLflow file store",
        description="Each run of the sweep with its step and per-layer metrics, its config and its summary (status, "
        "final and best val loss, divergence step, seed, arm, LR), grouped by arm. Exporting again into the same "
        "DIR replaces the runs written before. The trackers are extras: pip install 'harness[export]'.",
    )
    parser.add_argument("sweep", metavar="SWEEP", help="sweep name (`harness sweeps` lists them)")
    parser.add_argument("--to", required=True, choices=TRACKERS, help="the tracker whose offline form to write")
    parser.add_argument("dir", metavar="DIR", help="output directory (created if missing)")
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (e.g. in batch jobs)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Export the sweep and say where it went and how to look at it."""
    from analysis.export import export_sweep
    from harness.data.progress import progress

    exported = export_sweep(args.results, args.sweep, args.to, args.dir,
                            progress=None if args.no_progress else progress)
    print(exported.describe())
    return 0
