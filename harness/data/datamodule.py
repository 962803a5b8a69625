"""`TokenDataModule`: the Lightning face of a prepared corpus.

Training batches come from an endless iterable (not a DataLoader: no workers, no collation, no per-step
cost beyond one gather from the memmap); Lightning accepts any iterable and stops at `max_steps`. Because
the train iterable has no length, validate with an integer `val_check_interval` (steps) or a callback.
"""

from __future__ import annotations

import math
from typing import Iterator

import lightning as L

from harness.config.base import check_int
from harness.data.errors import DataError
from harness.data.pipeline import PreparedData
from harness.data.windows import Batch, TrainWindows, ValWindows


class TrainBatches:
    """Endless training batches from micro-batch `start` on: start, start + 1, ..."""

    def __init__(self, windows: TrainWindows, start: int) -> None:
        self.windows = windows
        self.start = start

    def __iter__(self) -> Iterator[Batch]:
        index = self.start
        while True:
            yield self.windows.batch(index)
            index += 1


class ValBatches:
    """Every validation window once, in order, `batch_size` at a time (the last batch may be smaller).

    Average the loss weighted by batch size (Lightning's `self.log(..., batch_size=B)`) so the result is
    the mean over the same windows whatever the batch size.
    """

    def __init__(self, windows: ValWindows, batch_size: int) -> None:
        self.windows = windows
        self.batch_size = batch_size

    def __len__(self) -> int:
        return math.ceil(len(self.windows) / self.batch_size)

    def __iter__(self) -> Iterator[Batch]:
        for start in range(0, len(self.windows), self.batch_size):
            yield self.windows.window_slice(start, start + self.batch_size)


class TokenDataModule(L.LightningDataModule):
    """(input_ids, targets) int64 batches of shape (B, T) from a `PreparedData`.

    Training batch i is a pure function of (seed, i), where i counts micro-batches over the whole run;
    after a restore it continues at `global_step × accumulate_grad_batches`, exactly where an
    uninterrupted run would be (checkpoints are taken on optimizer-step boundaries). With `share` = (k, n),
    one of n processes training one run, it yields the k-th slice of each training batch (`TrainWindows`).
    """

    def __init__(self, data: PreparedData, seq_len: int, batch_size: int, seed: int,
                 share: tuple[int, int] = (0, 1)) -> None:
        super().__init__()
        check_int("TrainConfig", "seed", seed, minimum=0)
        self.data = data
        self.seq_len = seq_len
        self.batch_size = batch_size
        self.seed = seed
        self.train_windows = TrainWindows(data.train_ids, seq_len, batch_size, seed, share)
        self.val_windows = ValWindows(data.val_ids, seq_len)

    def train_batch(self, index: int) -> Batch:
        """Micro-batch `index` of the run (also what a bare PyTorch loop trains on)."""
        return self.train_windows.batch(index)

    def train_batches(self, start: int = 0) -> TrainBatches:
        """The endless training stream from micro-batch `start` on."""
        return TrainBatches(self.train_windows, start)

    def train_dataloader(self) -> TrainBatches:
        trainer = self.trainer
        start = trainer.global_step * trainer.accumulate_grad_batches if trainer is not None else 0
        return self.train_batches(start)

    def val_dataloader(self) -> ValBatches:
        return ValBatches(self.val_windows, self.batch_size)

    @property
    def n_val_windows(self) -> int:
        """Number of windows the validation split holds at this seq_len."""
        return len(self.val_windows)

    def probe_batch(self, n_seqs: int) -> Batch:
        """The fixed probe batch for telemetry: the first `n_seqs` validation windows, (n_seqs, T) each."""
        check_int("TrainConfig", "probe_seqs", n_seqs)
        if n_seqs > len(self.val_windows):
            raise DataError(
                f"TrainConfig.probe_seqs={n_seqs} is invalid: the validation split holds only "
                f"{len(self.val_windows)} windows of seq_len={self.seq_len}; lower probe_seqs or raise "
                "DataConfig.val_tokens."
            )
        return self.val_windows.window_slice(0, n_seqs)
