"""Windows of the token stream: random training windows addressed by step, fixed validation windows.

A window of T+1 consecutive ids gives inputs (its first T) and next-token targets (its last T).
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch

from harness.config.base import check_int
from harness.data.errors import DataError

Batch = tuple[torch.Tensor, torch.Tensor]  # (input_ids (B, T) int64, targets (B, T) int64)


def batch_seed(seed: int, index: int) -> int:
    """A 63-bit generator seed that is a pure function of (run seed, batch index).

    Hashed rather than mixed arithmetically (`seed * K + index`), so no two pairs share a stream by design.
    """
    digest = hashlib.blake2b(f"{seed}:{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def check_fits(ids: np.ndarray, seq_len: int, split: str, remedy: str) -> None:
    """Raise DataError unless `ids` holds at least one window of `seq_len` + 1 tokens."""
    if len(ids) < seq_len + 1:
        raise DataError(
            f"TrainConfig.seq_len={seq_len} is invalid: the {split} split has only {len(ids)} tokens and a window "
            f"needs seq_len + 1 = {seq_len + 1}; {remedy}."
        )


class TrainWindows:
    """Training batches of `batch_size` windows at random offsets: batch i depends only on (seed, i).

    So a run resumed at batch i sees exactly the batches an uninterrupted run would, and two runs with
    the same seed see the same data whatever their model. `share` = (k, n): this process trains on the k-th of
    n equal slices of every batch (one run on n devices), so the n processes together see exactly its windows.
    """

    def __init__(self, ids: np.ndarray, seq_len: int, batch_size: int, seed: int,
                 share: tuple[int, int] = (0, 1)) -> None:
        check_int("TrainConfig", "seq_len", seq_len)
        check_int("TrainConfig", "batch_size", batch_size)
        check_fits(ids, seq_len, "training", "lower seq_len or use more text")
        self.ids = ids
        self.seq_len = seq_len
        self.batch_size = batch_size
        self.seed = seed
        self.offsets = np.arange(seq_len + 1)  # (T+1,)
        part, parts = share
        self.rows = slice(part * batch_size // parts, (part + 1) * batch_size // parts)

    def starts(self, index: int) -> torch.Tensor:
        """(B,) window start positions of batch `index`."""
        generator = torch.Generator().manual_seed(batch_seed(self.seed, index))
        return torch.randint(0, len(self.ids) - self.seq_len, (self.batch_size,), generator=generator)

    def batch(self, index: int) -> Batch:
        """Batch `index` of the run (this process's share of it): (input_ids, targets), each (B, T) int64."""
        starts = self.starts(index).numpy()[self.rows]  # (B,), or this process's slice of them
        gathered = self.ids[starts[:, None] + self.offsets]  # (B, T+1) from the memmap
        windows = torch.from_numpy(gathered.astype(np.int64))
        return windows[:, :-1].contiguous(), windows[:, 1:].contiguous()


class ValWindows:
    """The validation split cut into consecutive non-overlapping windows, in order: identical for every arm."""

    def __init__(self, ids: np.ndarray, seq_len: int) -> None:
        check_int("TrainConfig", "seq_len", seq_len)
        check_fits(ids, seq_len, "validation", "lower seq_len or raise DataConfig.val_tokens")
        n = (len(ids) - 1) // seq_len
        stream = torch.from_numpy(np.asarray(ids[: n * seq_len + 1], dtype=np.int64))
        self.inputs = stream[:-1].view(n, seq_len)  # (N, T)
        self.targets = stream[1:].view(n, seq_len)  # (N, T)

    def __len__(self) -> int:
        return len(self.inputs)

    def window_slice(self, start: int, stop: int) -> Batch:
        """Windows start..stop-1 as one batch: (input_ids, targets), each (stop - start, T) int64."""
        return self.inputs[start:stop], self.targets[start:stop]
