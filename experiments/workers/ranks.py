"""A worker whose cells train on several devices (`--devices-per-cell N`, docs/sweeps.md): the worker is rank 0
of every cell it trains, and N - 1 helper processes (ranks 1 … N-1) train their shares of each cell with it.

The worker starts its helpers once and hosts a TCP store on 127.0.0.1 that they connect to. For each cell it
claims, it posts the cell's plan row as message i, and all N processes join a process group made for that cell
alone (a cell that fails or is lost leaves no broken group behind for the next one); after the cell each
leaves it. Only the worker claims, beats, fences and writes (harness/train/distributed.py): a helper holds no
claim and writes nothing, so the claim protocol sees one writer per cell. A helper that died is started again
before the next cell; helpers exit when the worker posts `stop`, or when it is gone.

Helpers run as `python -m experiments.workers.ranks --port P --rank R …`, started by the worker only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Iterator

from harness.train.placement import Placement

STOP = "stop"
POLL = timedelta(seconds=5)  # how often a waiting helper looks whether its worker still lives
STOPPED_WAIT = 30.0  # seconds a closing worker waits for its helpers to exit before killing them


def _backend() -> str:
    """nccl where this process sees CUDA devices, else gloo."""
    import torch

    return "nccl" if torch.cuda.is_available() else "gloo"


def join(store, cell: int, rank: int, devices: int) -> None:
    """Join cell `cell`'s process group as `rank` of `devices` (NCCL: on device `rank` of the visible ones)."""
    import torch
    import torch.distributed as dist

    backend = _backend()
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, store=dist.PrefixStore(f"cell{cell}/", store), rank=rank, world_size=devices)


def leave() -> None:
    """Leave the cell's process group (Lightning may have torn it down already after an error)."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


class CellRanks:
    """The worker's side: its helpers and the store they listen to."""

    def __init__(self, placement: Placement, helper_args: list[str]) -> None:
        import torch.distributed as dist

        self.placement, self.helper_args = placement, helper_args
        self.store = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)
        self.posted = 0  # messages posted so far: the next cell's number
        self.helpers = [self._start(rank) for rank in range(1, placement.devices)]

    def _start(self, rank: int) -> subprocess.Popen:
        command = [sys.executable, "-m", "experiments.workers.ranks", "--port", str(self.store.port), "--rank",
                   str(rank), "--first", str(self.posted), *self.placement.worker_args(), *self.helper_args]
        return subprocess.Popen(command, stdin=subprocess.DEVNULL)  # its lines go to the worker's log

    def _restart_dead(self, log) -> None:
        for i, helper in enumerate(self.helpers):
            if helper.poll() is not None:
                log(f"rank {i + 1} exited with {helper.returncode}; starting it again")
                self.helpers[i] = self._start(i + 1)

    @contextmanager
    def cell(self, row: dict, resume: bool, log) -> Iterator[None]:
        """Tell the helpers to train `row`'s cell (resuming it or not) and hold its process group meanwhile."""
        self._restart_dead(log)
        number = self.posted
        self.store.set(f"message{number}", json.dumps({"row": row, "resume": resume}))
        self.posted += 1
        join(self.store, number, 0, self.placement.devices)
        try:
            yield
        finally:
            leave()

    def close(self) -> None:
        """Tell the helpers to exit and wait for them (killing any that does not)."""
        self.store.set(f"message{self.posted}", STOP)
        deadline = time.monotonic() + STOPPED_WAIT
        for helper in self.helpers:
            try:
                helper.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                helper.kill()
                helper.wait()


def _message(store, number: int, worker: int) -> str | None:
    """Message `number` from the worker, or None once the worker is gone."""
    while True:
        try:
            store.wait([f"message{number}"], POLL)
            return store.get(f"message{number}").decode()
        except Exception:  # a timeout (still waiting) or a broken connection (the worker died)
            if os.getppid() != worker:
                return None


def _train(args, message: dict, number: int) -> None:
    """Train this rank's share of the cell the worker posted. The group is joined first, whatever fails after:
    the worker waits in the join, and a rank that leaves the group ends the cell's collectives with an error."""
    from experiments.plan.cell import Cell
    from harness.data import prepare
    from harness.train.run import RunSpec, train_run

    placement = Placement(args.devices_per_cell, args.strategy)
    join(args.store, number, args.rank, placement.devices)
    try:
        cell = Cell.from_plan_row(message["row"])
        prepared = prepare(cell.data, cell.model.vocab_size)  # the worker prepared it first: a cache read
        spec = RunSpec(cell.model, cell.train, cell.data, args.results, cell.run_id, resume=message["resume"],
                       sweep=args.sweep, arm=cell.arm)
        train_run(spec, prepared, progress=False, placement=placement, rank=args.rank)
    finally:
        leave()


def helper(args) -> int:
    """A helper's life: train each cell the worker posts until it posts `stop` or is gone."""
    import traceback

    from harness.train.interrupt import request_stop, stop_on_signals

    worker = os.getppid()
    signal.signal(signal.SIGUSR2, lambda signum, frame: request_stop(signum))  # SLURM's warning reaches every process
    with stop_on_signals():  # a signal asks for a stop, which the run's processes agree on at the next step
        number = args.first
        while (text := _message(args.store, number, worker)) not in (None, STOP):
            try:
                _train(args, json.loads(text), number)
            except BaseException as error:  # the worker records what happened to the cell; wait for the next
                if isinstance(error, KeyboardInterrupt):
                    raise
                print(f"rank {args.rank}: cell {number} ended with {type(error).__name__}: {error}\n"
                      f"{traceback.format_exc()}", flush=True)
            number += 1
    return 0


def main(argv: list[str] | None = None) -> int:
    import torch.distributed as dist

    parser = argparse.ArgumentParser(prog="python -m experiments.workers.ranks", description="A worker's helper rank.")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--first", type=int, default=0, help="the first message to wait for")
    parser.add_argument("--devices-per-cell", type=int, required=True)
    parser.add_argument("--strategy", required=True)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--sweep", required=True)
    parser.add_argument("--threads", type=int)
    args = parser.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    args.store = dist.TCPStore("127.0.0.1", args.port, is_master=False)
    return helper(args)


if __name__ == "__main__":
    sys.exit(main())
