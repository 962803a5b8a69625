"""The token cache: the whole corpus encoded once into a flat memmap that every arm and worker shares.

Layout: `<cache>/tokens/<corpus hash>-<tokenizer hash>.<dtype>`, a raw array of token ids (native byte order),
each document followed by `<|endoftext|>`. The dtype (uint16 up to 65536 tokens, else uint32) is in the
name, so the file needs no header and its length is its size over the item size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
from tokenizers import Tokenizer

from harness.data.progress import progress
from harness.data.tokenizer import eos_id

ENCODE_CHUNK_CHARS = 2_000_000  # characters per batch-encode call: parallel inside, bounded memory outside


def token_dtype(vocab_size: int) -> np.dtype:
    """The narrowest unsigned integer type that holds every id below `vocab_size`."""
    return np.dtype(np.uint16 if vocab_size <= 2**16 else np.uint32)


def tokens_path(cache_dir: Path, corpus_hash: str, tokenizer_hash: str, dtype: np.dtype) -> Path:
    """Where the corpus encoded by this tokenizer lives in the cache."""
    return cache_dir / "tokens" / f"{corpus_hash[:16]}-{tokenizer_hash[:16]}.{dtype.name}"


def _chunks(documents: list[str]) -> Iterator[list[str]]:
    chunk: list[str] = []
    size = 0
    for document in documents:
        chunk.append(document)
        size += len(document)
        if size >= ENCODE_CHUNK_CHARS:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def encode_to_file(tokenizer: Tokenizer, documents: list[str], dtype: np.dtype, path: Path) -> None:
    """Batch-encode `documents` into `path` as one flat array, `<|endoftext|>` after each document."""
    eos = eos_id(tokenizer)
    total_chars = sum(map(len, documents))
    with (open(path, "wb") as out,
          progress(total=total_chars, desc="encoding corpus", unit="char", unit_scale=True) as bar):
        for chunk in _chunks(documents):
            ids: list[int] = []
            for encoding in tokenizer.encode_batch_fast(chunk):
                ids.extend(encoding.ids)
                ids.append(eos)
            out.write(np.asarray(ids, dtype=dtype).tobytes())
            bar.update(sum(map(len, chunk)))


def open_tokens(path: Path) -> np.memmap:
    """The cached token array, memory-mapped read-only (pages are shared by every process on the machine)."""
    return np.memmap(path, dtype=np.dtype(path.suffix[1:]), mode="r")
