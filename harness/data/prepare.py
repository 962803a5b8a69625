"""`prepare`: from a `DataConfig` to a tokenizer and train/validation token arrays, through the shared cache."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from harness.config.data import DataConfig
from harness.data.cache import file_hash, resolve_cache_dir
from harness.data.corpus import Corpus
from harness.data.errors import DataError
from harness.data.token_cache import cached_tokens
from harness.data.tokenizer import EOS, cached_tokenizer


@dataclass(frozen=True)
class PreparedData:
    """Everything a run needs from its corpus; the arrays are read-only views of one shared memmap."""

    tokenizer: Tokenizer
    train_ids: np.ndarray  # (N_train,) token ids: the stream before the validation split
    val_ids: np.ndarray  # (N_val,) the last `val_tokens` ids of the stream, identical for every arm
    vocab_size: int  # the requested size (ModelConfig.vocab_size); every id is below it
    eos_id: int
    corpus_hash: str
    tokenizer_hash: str
    n_documents: int
    n_chars: int
    tokenizer_path: Path
    tokens_path: Path
    built: tuple[str, ...]  # what this call had to build ("tokenizer", "tokens"); empty on a warm cache

    @property
    def n_tokens(self) -> int:
        return len(self.train_ids) + len(self.val_ids)


def prepare(cfg: DataConfig, vocab_size: int) -> PreparedData:
    """Load (or reuse) the corpus, tokenizer and token cache that `cfg` and `vocab_size` name.

    Safe to call from many processes at once: each artifact is built by one of them and reused by the rest.
    """
    corpus = Corpus(cfg, resolve_cache_dir(cfg.cache_dir))
    tokenizer, tokenizer_path, trained = cached_tokenizer(corpus, vocab_size, cfg.tokenizer_train_chars)
    tokenizer_hash = file_hash(tokenizer_path)
    tokens, tokens_path, encoded = cached_tokens(corpus, tokenizer, tokenizer_hash, vocab_size)
    if len(tokens) <= cfg.val_tokens:
        raise DataError(
            f"DataConfig.val_tokens={cfg.val_tokens} is invalid: the corpus {cfg.source!r} has only {len(tokens)} "
            f"tokens, and the validation split must leave some for training; lower val_tokens or use more text."
        )
    split = len(tokens) - cfg.val_tokens
    return PreparedData(
        tokenizer=tokenizer,
        train_ids=tokens[:split],
        val_ids=tokens[split:],
        vocab_size=vocab_size,
        eos_id=tokenizer.token_to_id(EOS),
        corpus_hash=corpus.stats.corpus_hash,
        tokenizer_hash=tokenizer_hash,
        n_documents=corpus.stats.documents,
        n_chars=corpus.stats.chars,
        tokenizer_path=tokenizer_path,
        tokens_path=tokens_path,
        built=tuple(name for name, done in (("tokenizer", trained), ("tokens", encoded)) if done),
    )
