from __future__ import annotations

import numpy as np

from harness.data.token_cache import encode_to_file, open_tokens, token_dtype, tokens_path
from harness.data.tokenizer import EOS, train_tokenizer


def test_dtype_is_the_narrowest_that_holds_every_id():
    assert token_dtype(512) == np.uint16
    assert token_dtype(65536) == np.uint16
    assert token_dtype(65537) == np.uint32


def test_encoded_file_decodes_back_to_the_documents(tmp_path, documents, monkeypatch):
    monkeypatch.setattr("harness.data.token_cache.ENCODE_CHUNK_CHARS", 5_000)  # several chunks
    tokenizer = train_tokenizer(documents, 512, train_chars=30_000)
    path = tokens_path(tmp_path, "c" * 64, "t" * 64, token_dtype(512))
    path.parent.mkdir()
    encode_to_file(tokenizer, documents, token_dtype(512), path)
    stream = open_tokens(path)
    assert stream.dtype == np.uint16 and stream.max() < 512
    ends = np.flatnonzero(stream == tokenizer.token_to_id(EOS))
    assert len(ends) == len(documents) and ends[-1] == len(stream) - 1
    pieces = np.split(np.asarray(stream), ends + 1)[:-1]
    assert [tokenizer.decode(piece[:-1].tolist()) for piece in pieces] == documents


def test_wide_vocabularies_are_stored_as_uint32(tmp_path, documents):
    tokenizer = train_tokenizer(documents, 512, train_chars=10_000)
    path = tokens_path(tmp_path, "c" * 64, "t" * 64, token_dtype(70_000))
    path.parent.mkdir()
    encode_to_file(tokenizer, documents[:5], token_dtype(70_000), path)
    assert path.suffix == ".uint32"
    first = tokenizer.encode(documents[0]).ids + [tokenizer.token_to_id(EOS)]
    np.testing.assert_array_equal(open_tokens(path)[: len(first)], first)
