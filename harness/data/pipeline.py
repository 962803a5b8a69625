"""`prepare`: from a `DataConfig` to a tokenizer and train/validation token arrays, through the shared cache."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from harness.config.data import DataConfig
from harness.data.cache import build_once, exclusive_lock, file_hash, resolve_cache_dir
from harness.data.corpus import Corpus
from harness.data.errors import DataError
from harness.data.token_cache import encode_to_file, open_tokens, token_dtype, tokens_path
from harness.data.tokenizer import check_vocab_size, eos_id, tokenizer_path, train_tokenizer


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
    built: tuple[str, ...]  # the slow steps this call did: "corpus" (read the text), "tokenizer", "tokens"

    @property
    def tokenizer_vocab_size(self) -> int:
        """Tokens the trained BPE really has: below `vocab_size` when the corpus offers too few merges."""
        return self.tokenizer.get_vocab_size()

    @property
    def n_tokens(self) -> int:
        """Tokens in the whole stream (training + validation split)."""
        return len(self.train_ids) + len(self.val_ids)


def _cached_files(corpus: Corpus, vocab_size: int, train_chars: int, dtype: np.dtype) -> tuple[Path, Path] | None:
    """(tokenizer file, token file) if the cache already holds both, else None.

    Reads no text: the corpus hash comes from the manifest, whose existence is checked first.
    """
    if not corpus.manifest_path.exists():
        return None
    tokenizer_file = tokenizer_path(corpus.cache_dir, corpus.stats.corpus_hash, vocab_size, train_chars)
    if not tokenizer_file.exists():
        return None
    tokens_file = tokens_path(corpus.cache_dir, corpus.stats.corpus_hash, file_hash(tokenizer_file), dtype)
    return (tokenizer_file, tokens_file) if tokens_file.exists() else None


def _build_missing(corpus: Corpus, vocab_size: int, train_chars: int, dtype: np.dtype) -> tuple[bool, bool]:
    """Hash the corpus, train the tokenizer and encode the corpus, each where missing; (trained, encoded)."""
    tokenizer_file = tokenizer_path(corpus.cache_dir, corpus.stats.corpus_hash, vocab_size, train_chars)
    trained = build_once(tokenizer_file,
                         lambda temp: train_tokenizer(corpus.documents, vocab_size, train_chars).save(str(temp)))
    # Encode with the tokenizer as read back from the cache, the one every other worker will load.
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokens_file = tokens_path(corpus.cache_dir, corpus.stats.corpus_hash, file_hash(tokenizer_file), dtype)
    encoded = build_once(tokens_file, lambda temp: encode_to_file(tokenizer, corpus.documents, dtype, temp))
    return trained, encoded


def prepare(cfg: DataConfig, vocab_size: int) -> PreparedData:
    """Load (or reuse) the corpus, tokenizer and token cache that `cfg` and `vocab_size` name.

    Safe to call from many processes at once: each artifact is built by one of them and reused by the rest;
    a warm cache is used without taking any lock.
    """
    check_vocab_size(vocab_size)
    corpus = Corpus(cfg, resolve_cache_dir(cfg.cache_dir))
    dtype = token_dtype(vocab_size)
    files = _cached_files(corpus, vocab_size, cfg.tokenizer_train_chars, dtype)
    trained = encoded = False
    if files is None:
        # One lock, taken before any text is read, around every build this call may need: the worker that
        # reads the text also trains and encodes with it, so of many workers starting cold only one reads it.
        key = f"{corpus.fingerprint[:32]}-v{vocab_size}-c{cfg.tokenizer_train_chars}"
        with exclusive_lock(corpus.cache_dir / "locks" / f"{key}.lock"):
            trained, encoded = _build_missing(corpus, vocab_size, cfg.tokenizer_train_chars, dtype)
        files = _cached_files(corpus, vocab_size, cfg.tokenizer_train_chars, dtype)
    assert files is not None, "built just above"
    tokenizer_file, tokens_file = files

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokens = open_tokens(tokens_file)
    if len(tokens) <= cfg.val_tokens:
        raise DataError(
            f"DataConfig.val_tokens={cfg.val_tokens} is invalid: the corpus {cfg.source!r} has only {len(tokens)} "
            f"tokens, and the validation split must leave some for training; lower val_tokens or use more text."
        )
    split = len(tokens) - cfg.val_tokens
    steps = (("corpus", corpus.text_was_read), ("tokenizer", trained), ("tokens", encoded))
    return PreparedData(
        tokenizer=tokenizer,
        train_ids=tokens[:split],
        val_ids=tokens[split:],
        vocab_size=vocab_size,
        eos_id=eos_id(tokenizer),
        corpus_hash=corpus.stats.corpus_hash,
        tokenizer_hash=file_hash(tokenizer_file),
        n_documents=corpus.stats.documents,
        n_chars=corpus.stats.chars,
        tokenizer_path=tokenizer_file,
        tokens_path=tokens_file,
        built=tuple(name for name, done in steps if done),
    )
