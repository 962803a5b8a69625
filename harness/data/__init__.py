"""Data: corpus → byte-level BPE tokenizer → shared token cache → Lightning batches.

`prepare(data_cfg, vocab_size)` needs no torch; `TokenDataModule` (which imports Lightning) is loaded on
first use, so `from harness.data import prepare` stays light.
"""

from typing import Any

from harness.data.errors import DataError
from harness.data.pipeline import PreparedData, prepare

__all__ = ["DataError", "PreparedData", "TokenDataModule", "prepare"]


def __getattr__(name: str) -> Any:
    if name == "TokenDataModule":
        from harness.data.datamodule import TokenDataModule

        return TokenDataModule
    raise AttributeError(f"module 'harness.data' has no attribute {name!r}")
