"""`DataConfig`: where the training text comes from and how much of it to use.

Only plain values, checked without touching the filesystem: a config is built and validated on a login
node long before its data is resolved on a worker (`harness.data.prepare()` does that, with its own errors).
The tokenizer's vocabulary size is `ModelConfig.vocab_size`, so it is not repeated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.config.base import ConfigBase, check, check_int

DEFAULT_SOURCE = "default"


@dataclass(frozen=True)
class DataConfig(ConfigBase):
    """The corpus of one run. See docs/data.md for sources, the cache and the validation split."""

    # "default" (the built-in corpus: prose shipped with every Python), a local file, directory or glob of
    # .txt/.jsonl/.json/.parquet files, or a Hugging Face hub dataset name such as "roneneldan/TinyStories".
    source: str = DEFAULT_SOURCE
    text_field: str = "text"  # the column holding the text in jsonl/json/parquet files and hub datasets
    split: str = "train"  # the hub dataset's split; local files and the default corpus have only "train"
    val_tokens: int = 32768  # the fixed validation split: the last tokens of the stream, the same for every arm
    cache_dir: str | None = None  # None: $HARNESS_CACHE, else ~/.cache/harness
    max_chars: int | None = None  # cap on corpus size in characters; None: all of it
    tokenizer_train_chars: int = 5_000_000  # characters the BPE tokenizer is trained on (from the start)

    def __post_init__(self) -> None:
        self.store_floats()
        name = type(self).__name__
        for field in ("source", "text_field", "split"):
            value = getattr(self, field)
            check(isinstance(value, str) and value.strip() != "", name, field, value, "must be a non-empty string")
        check(
            self.cache_dir is None or (isinstance(self.cache_dir, str) and self.cache_dir.strip() != ""),
            name, "cache_dir", self.cache_dir, "must be a directory path or None",
        )
        check_int(name, "val_tokens", self.val_tokens)
        check_int(name, "max_chars", self.max_chars, allow_none=True)
        check_int(name, "tokenizer_train_chars", self.tokenizer_train_chars)

    def hashed_fields(self) -> dict[str, Any]:
        """The content hash is blind to `cache_dir`: where the cache lives changes no token."""
        return {name: value for name, value in self.changed_fields().items() if name != "cache_dir"}
