"""The byte-level BPE tokenizer, trained with `tokenizers` on the corpus; its cache key is what determines it.

Byte-level (GPT-2 style): every byte is in the alphabet, so any text encodes and decodes back exactly.
One special token, `<|endoftext|>` (id 0), separates documents in the token stream.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from harness.data.corpus import cap_chars
from harness.data.errors import DataError
from harness.data.progress import progress

EOS = "<|endoftext|>"
BYTE_ALPHABET = 256
MIN_VOCAB = BYTE_ALPHABET + 1  # every byte plus <|endoftext|>
# Everything besides vocab size and training text that shapes the trained tokenizer; part of its cache key.
SETTINGS: dict[str, Any] = {"model": "bpe", "pre_tokenizer": "byte_level", "add_prefix_space": False,
                            "min_frequency": 2, "special_tokens": [EOS], "version": 1}


def eos_id(tokenizer: Tokenizer) -> int:
    """The id of `<|endoftext|>`, which every tokenizer trained here has."""
    found = tokenizer.token_to_id(EOS)
    if found is None:
        raise DataError(f"the tokenizer has no {EOS} token: it was not trained by harness")
    return found


def check_vocab_size(vocab_size: int) -> None:
    """Raise DataError unless a byte-level BPE can have `vocab_size` tokens."""
    if vocab_size < MIN_VOCAB:
        raise DataError(
            f"ModelConfig.vocab_size={vocab_size} is too small for a byte-level BPE tokenizer: it needs at least "
            f"{MIN_VOCAB} (256 bytes + {EOS})."
        )


def train_tokenizer(documents: list[str], vocab_size: int, train_chars: int) -> Tokenizer:
    """A byte-level BPE with at most `vocab_size` tokens trained on the first `train_chars` characters."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=SETTINGS["add_prefix_space"])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=SETTINGS["min_frequency"],
        special_tokens=SETTINGS["special_tokens"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    text = list(cap_chars(documents, train_chars))
    bar = progress(text, desc="training tokenizer", unit="doc")
    tokenizer.train_from_iterator(bar, trainer, length=len(text))
    return tokenizer


def tokenizer_path(cache_dir: Path, corpus_hash: str, vocab_size: int, train_chars: int) -> Path:
    """Where the tokenizer for this corpus, vocabulary size and training budget lives in the cache."""
    settings = hashlib.sha256(json.dumps(SETTINGS, sort_keys=True).encode()).hexdigest()[:8]
    return cache_dir / "tokenizers" / f"{corpus_hash[:16]}-v{vocab_size}-c{train_chars}-{settings}.json"
