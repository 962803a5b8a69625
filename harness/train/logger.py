"""`ResultsLogger`: a Lightning `Logger` that writes a run into the results store through `db.RunWriter`.

It sits beside any other Lightning logger (W&B, TensorBoard): metrics go to all of them; per-layer metrics
and events, which the generic Logger API has no place for, go to loggers that have `log_layer_metrics` /
`log_event` (this one). The run's config is recorded when the writer opens (Lightning opens it at setup);
hyperparameters a LightningModule logs on top are kept as a `hyperparams` event.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any, Mapping

from lightning.pytorch import Callback
from lightning.pytorch.loggers import Logger
from lightning.pytorch.loggers.logger import rank_zero_experiment
from lightning.pytorch.utilities import rank_zero_only

from db import RunWriter
from db.outcomes import SupersededError
from harness.train.fencing import UNFENCED, Fence, FenceLost


class ResultsLogger(Logger):
    """One run of the results store. `finalize` closes it as completed, diverged (after a `diverged` event)
    or failed; `summary` (set before the end, e.g. by `RunSummary`) is stored with the status."""

    def __init__(
        self,
        results_dir: str | Path,
        run_id: str,
        *,
        config: Mapping[str, Any] | None = None,
        sweep: str | None = None,
        arm: str | None = None,
        seed: int | None = None,
        params: int | None = None,
        flops_per_token: float | None = None,
        resume_from_step: int | None = None,
        fence: Fence = UNFENCED,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.results_dir = Path(results_dir)
        self.run_id = run_id
        self.config: dict[str, Any] = dict(config or {})
        self._identity: dict[str, Any] = {"sweep": sweep, "arm": arm, "seed": seed, "params": params,
                                          "flops_per_token": flops_per_token}
        self.provenance = dict(provenance or {})  # which code and machine write the segment (harness.provenance)
        self.resume_from_step = resume_from_step
        self.diverged_at_step: int | None = None
        self.interrupted_at_step: int | None = None  # set by StopOnRequest once its checkpoint is written
        self.pruned_at_step: int | None = None  # set by a search's pruning callback: a result, stopped early
        self.summary: dict[str, Any] = {}
        self.checkpoint: str | None = None  # set by RunCheckpoints at the end: the result names its final checkpoint
        self.fence = fence
        self.fence_lost: FenceLost | None = None  # set when the claim was lost: the segment is left as it is
        self._writer: RunWriter | None = None

    @property
    def name(self) -> str:
        return "harness"

    @property
    def version(self) -> str:
        return self.run_id

    @property
    def save_dir(self) -> str:
        return str(self.results_dir)

    @property
    @rank_zero_experiment
    def experiment(self) -> RunWriter:
        """The run's `db.RunWriter`, opened (or resumed as a new segment) on first use; on the other processes of
        a multi-device run Lightning's dummy, so the run has one writer."""
        if self._writer is None:
            self.fence.check("open a segment")
            try:
                self._writer = RunWriter.open(
                    self.results_dir, self.run_id, config=self.config, **self._identity,
                    resume=self.resume_from_step is not None, resume_from_step=self.resume_from_step,
                    claim=self.fence.generation, provenance=self.provenance,
                )
            except SupersededError as refused:  # taken over between the check and the open: the store said no
                raise FenceLost(f"not writing (open a segment): {refused}") from None
        return self._writer

    @rank_zero_only
    def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
        """A module's own hyperparameters, stored as one `hyperparams` event (JSON in `detail`)."""
        params = dict(params) if isinstance(params, Mapping) else vars(params)
        self.experiment.log_event(0, "hyperparams", detail=json.dumps(params, sort_keys=True, default=str))

    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        self.experiment.log_metrics(step or 0, metrics)

    @rank_zero_only
    def log_layer_metrics(self, step: int, name: str, values: Any) -> None:
        """One value per layer (1-D) or per layer and head (2-D)."""
        self.experiment.log_layer_metrics(step, name, values)

    @rank_zero_only
    def log_event(self, step: int, kind: str, value: float | None = None, detail: str | None = None) -> None:
        """A run event; a `diverged` event also decides the status the run closes with."""
        if kind == "diverged":
            self.diverged_at_step = step
        self.experiment.log_event(step, kind, value, detail)

    @rank_zero_only
    def save(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    @rank_zero_only
    def finalize(self, status: str) -> None:
        """Close the run: Lightning's 'success' becomes completed or diverged; a requested stop interrupted;
        anything else failed, with the exception Lightning is handling (its traceback) in the summary."""
        if self._writer is None or self._writer.closed:
            return
        error = sys.exc_info()[1]  # Lightning finalizes from inside its `except` block
        if not isinstance(error, FenceLost):
            try:
                self.fence.check("close the segment")
            except FenceLost as lost:
                error = lost
        if isinstance(error, FenceLost):  # someone else holds the cell now: this segment stays as it is
            self.fence_lost = error
            return
        try:
            self._close(self._writer, status, error)
        except SupersededError as refused:  # taken over between the check and the close: the store said no
            self.fence_lost = FenceLost(f"not writing (close the segment): {refused}")

    def _close(self, writer: RunWriter, status: str, error: BaseException | None) -> None:
        """Close the writer with the status the run ended in (see `finalize`)."""
        if self.checkpoint is not None:
            self.summary = {**self.summary, "checkpoint": self.checkpoint}
        if self.diverged_at_step is not None:
            writer.close("diverged", diverged_at_step=self.diverged_at_step, summary=self.summary)
        elif self.pruned_at_step is not None:
            writer.close("pruned", summary={**self.summary, "pruned_at_step": self.pruned_at_step})
        elif self.interrupted_at_step is not None:
            writer.close("interrupted", summary={**self.summary, "interrupted_at_step": self.interrupted_at_step})
        elif status in ("success", "finished"):
            writer.close("completed", summary=self.summary)
        else:
            failure = ({"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()} if error
                       else {})
            writer.close("failed", summary={**self.summary, **failure})


class FlushOnCheckpoint(Callback):
    """Flush the loggers whenever a checkpoint is written: a run killed later and resumed from that
    checkpoint then still has every row up to it in the store (the writer otherwise flushes every 30 s)."""

    def on_save_checkpoint(self, trainer, pl_module, checkpoint) -> None:
        for logger in trainer.loggers:
            logger.save()
