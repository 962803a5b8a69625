"""A sweep worker process: a long-lived process that pays for torch, Lightning and data preparation once, then
runs the claim loop (experiments.workers.claim_loop) over a sweep's stored plan until no cell needs work, and exits
with its code: 0, or 128 + signal when SIGINT/SIGTERM stopped it (the cell in flight checkpointed, `interrupted`).

Run as `python -m experiments.workers.worker --results DIR --sweep NAME`; `--standby` alone (the local runner's,
experiments.backends.local_workers) imports first, then reads those arguments on stdin (experiments.workers.standby).
"""

from __future__ import annotations

import argparse
import atexit
import os
import socket
import sys
from pathlib import Path

from experiments.workers.attempt import import_training
from experiments.workers.claim_loop import Worker
from experiments.workers.options import DEFAULT_RETRIES, DEFAULT_STALE_AFTER, HEARTBEAT_EVERY
from experiments.workers.standby import await_command
from harness.train.checkpoints import KEEP_CHECKPOINTS
from harness.train.placement import SINGLE_DEVICE, Placement


def parser() -> argparse.ArgumentParser:
    """The worker's options (the launchers pass them; `harness sweep` documents them)."""
    parser = argparse.ArgumentParser(prog="python -m experiments.workers.worker",
                                     description="Train cells of a stored sweep plan.",
                                     epilog="`--standby` alone: import first, then read these arguments on stdin "
                                     "(as the local runner starts its workers).")
    parser.add_argument("--results", required=True, type=Path)
    parser.add_argument("--sweep", required=True)
    parser.add_argument("--worker", default=f"{socket.gethostname()}-{os.getpid()}")
    parser.add_argument("--retries", type=int, default=DEFAULT_RETRIES)
    parser.add_argument("--stale-after", type=float, default=DEFAULT_STALE_AFTER)
    parser.add_argument("--heartbeat-every", type=float, default=HEARTBEAT_EVERY)
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--optuna-storage",
                        help="SQLAlchemy URL of the searches' Optuna storage (default: SQLite in the results dir)")
    parser.add_argument("--devices-per-cell", type=int, default=SINGLE_DEVICE.devices,
                        help="devices (processes) each cell trains on")
    parser.add_argument("--strategy", default=SINGLE_DEVICE.strategy, help="ddp or fsdp, for cells on several devices")
    parser.add_argument("--keep-checkpoints", choices=KEEP_CHECKPOINTS, default="last",
                        help="checkpoints a cell keeps (harness.train.checkpointing)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a worker with `argv` (a standby one waits for them first); its exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--standby"]:
        import_training()
        argv = await_command()
        if argv is None:
            return 0
    args = parser().parse_args(argv)
    import_training(args.threads)
    helper_args = ["--results", str(args.results), "--sweep", args.sweep,
                   *(["--threads", str(args.threads)] if args.threads else [])]
    worker = Worker(args.results, args.sweep, args.worker, args.retries, args.stale_after, args.optuna_storage,
                    args.heartbeat_every, Placement(args.devices_per_cell, args.strategy), args.keep_checkpoints)
    return worker.run(helper_args)


def exit_now(code: int) -> None:
    """End the process without the interpreter's teardown of torch and Lightning (2-3 s of CPU on the 2-core
    VM, and the last worker's teardown is on the sweep's closing path): by now every run writer is closed and
    every claim released; the atexit handlers still run and the output is flushed."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
