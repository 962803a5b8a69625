"""Stopping a run on request (Ctrl-C, or the SIGTERM a scheduler sends on preemption and time limits): the
signal only raises a flag; the next finished optimizer step writes a checkpoint, and the run ends as
`interrupted`, so a resume continues from exactly there instead of from the last periodic checkpoint.

A second Ctrl-C while a stop is pending interrupts at once (Python's usual KeyboardInterrupt).
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

from lightning.pytorch import Callback

from harness.train.checkpointing import RunCheckpoints
from harness.train.distributed import agree_max

_requested: list[int] = []  # the signal numbers received; process-wide, like the signals themselves


class RunInterrupted(BaseException):
    """Raised (through Lightning's handler, which then finalizes the loggers) once the stop checkpoint is
    written. A BaseException, like KeyboardInterrupt, so `except Exception` in user code does not swallow it."""

    def __init__(self, signum: int, step: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name} at step {step}")
        self.signum = signum
        self.step = step


def stop_requested() -> int | None:
    """The signal that asked this process to stop, or None."""
    return _requested[0] if _requested else None


def request_stop(signum: int = signal.SIGTERM) -> None:
    """Ask the running cell (and a sweep worker's loop) to stop at the next step, as a signal would."""
    if not _requested:
        _requested.append(signum)


def _handle(signum, frame) -> None:
    if signum == signal.SIGINT and _requested:
        raise KeyboardInterrupt
    request_stop(signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM request a graceful stop instead of killing the process (main thread
    only: Python delivers signals there). The previous handlers come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def clear_stop_request() -> None:
    """Forget a handled request (tests, notebooks)."""
    _requested.clear()


class StopOnRequest(Callback):
    """At the first finished optimizer step after a stop request: checkpoint (as `last.ckpt`, through the
    run's fenced `RunCheckpoints`), mark the results loggers interrupted, and raise `RunInterrupted`."""

    def __init__(self, checkpoints: RunCheckpoints) -> None:
        self.checkpoints = checkpoints

    def on_train_start(self, trainer, pl_module) -> None:
        # Lightning's own SIGTERM handler ends the fit at the next micro-batch (also mid-accumulation), before
        # the stop checkpoint, and exits 0; put back the handlers that were there before fit (ours).
        trainer._signal_connector.teardown()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if pl_module.finished_step_values() is None:
            return
        signum = agree_max(trainer, stop_requested() or 0)  # a signal to any process of the run stops them all
        if not signum:
            return
        step = trainer.global_step
        self.checkpoints.save(trainer)
        for logger in trainer.loggers:
            if hasattr(logger, "interrupted_at_step"):
                logger.interrupted_at_step = step
        raise RunInterrupted(signum, step)
