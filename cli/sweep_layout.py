"""`harness sweep`'s words for workers and devices, the same for every backend (docs/sweeps.md, "Workers"):
`--workers` (in all), `--workers-per-device`, `--devices-per-cell`, `--strategy`; and the spellings they
replace, refused with a line naming the new ones where the old meaning would now be misread."""

from __future__ import annotations

import argparse

from errors import ConfigError
from experiments.backends.layout import Layout
from harness.train.placement import SINGLE_DEVICE, Placement

# Old spellings whose commands would now mean something else (--workers used to count SLURM array elements).
RETIRED = {
    "tasks_per_gpu": "--tasks-per-gpu is now --workers-per-device, and --workers counts workers in all, not array "
                     "elements (--workers 8 --gpus-per-task 1 --tasks-per-gpu 4 is now --workers 32 "
                     "--gpus-per-element 1 --workers-per-device 4).",
    "gpus_per_task": "--gpus-per-task is now --gpus-per-element, and --workers counts workers in all, not array "
                     "elements (--workers 8 --gpus-per-task 1 --tasks-per-gpu 4 is now --workers 32 "
                     "--gpus-per-element 1 --workers-per-device 4).",
}


def add_layout_options(parser: argparse.ArgumentParser) -> None:
    """--workers, --workers-per-device (old: --per-device), --devices-per-cell, --strategy."""
    parser.add_argument("--workers", type=int, metavar="N",
                        help="workers in all, each training one cell at a time (default: one per device slot here; "
                        "one array element's on SLURM)")
    parser.add_argument("--workers-per-device", "--per-device", dest="workers_per_device", type=int,
                        default=Layout.workers_per_device, metavar="K",
                        help="workers sharing one GPU, for tiny proxies (default %(default)s; --per-device: the old "
                        "spelling)")
    parser.add_argument("--devices-per-cell", type=int, default=SINGLE_DEVICE.devices, metavar="N",
                        help="devices every cell trains on, one process each, the batch split evenly "
                        "(default %(default)s)")
    parser.add_argument("--strategy", default=SINGLE_DEVICE.strategy, metavar="ddp|fsdp",
                        help="how a cell on several devices splits its work: ddp (a full copy per device) or fsdp "
                        "(weights, gradients and optimizer state sharded); default %(default)s")
    for name in RETIRED:
        parser.add_argument(f"--{name.replace('_', '-')}", dest=f"retired_{name}", help=argparse.SUPPRESS)


def layout_from(args: argparse.Namespace) -> Layout:
    """The launch's `Layout`; ConfigError for a retired spelling or a bad value, before anything is written."""
    for name, message in RETIRED.items():
        if getattr(args, f"retired_{name}") is not None:
            raise ConfigError(message)
    return Layout(args.workers, args.workers_per_device, Placement(args.devices_per_cell, args.strategy))


def check_cells(plan, layout) -> None:
    """Every cell's batch splits evenly over its devices (ConfigError naming the first that does not)."""
    if layout.placement.distributed:
        for cell in plan.cells:
            layout.placement.check_batch(cell.train.batch_size, f"arm {cell.arm}")
