"""Rows the generic Lightning `Logger` API has no place for (per-layer metrics, run events) go to every
attached logger that has a method for them, i.e. the results store's `ResultsLogger`."""

from __future__ import annotations

from typing import Any


def record_event(trainer, step: int, kind: str, value: float | None = None, detail: str | None = None) -> None:
    """Hand a run event (spike, divergence, …) to each logger with `log_event`."""
    for logger in trainer.loggers:
        if hasattr(logger, "log_event"):
            logger.log_event(step, kind, value, detail)


def record_layer_metrics(trainer, step: int, name: str, values: Any) -> None:
    """Hand per-layer (1-D) or per-layer-and-head (2-D) values to each logger with `log_layer_metrics`."""
    for logger in trainer.loggers:
        if hasattr(logger, "log_layer_metrics"):
            logger.log_layer_metrics(step, name, values)
