from __future__ import annotations

import hashlib
import pydoc_data.topics

import pytest

from harness.config import DataConfig
from harness.data import prepare
from harness.data.default_corpus import MIN_DOCSTRING_CHARS, default_documents


@pytest.mark.slow
def test_default_corpus_is_substantial_real_prose():
    documents = default_documents()
    assert len(documents) > 1000
    assert sum(map(len, documents)) > 1_000_000
    assert len(set(documents)) == len(documents)
    topics = {text.strip() for text in pydoc_data.topics.topics.values()}
    assert topics <= set(documents)
    docstrings = set(documents) - topics
    assert min(map(len, docstrings)) >= MIN_DOCSTRING_CHARS


def test_default_corpus_is_interleaved_by_content_hash():
    documents = default_documents()
    keys = [hashlib.sha256(d.encode()).digest() for d in documents]
    assert keys == sorted(keys)


def test_default_corpus_prepares_without_the_network(tmp_path, no_network):
    cfg = DataConfig(cache_dir=str(tmp_path), max_chars=150_000, val_tokens=1024)
    data = prepare(cfg, 512)
    assert data.n_chars == 150_000
    assert len(data.val_ids) == 1024 and len(data.train_ids) > 10_000
    assert no_network == []


def test_local_files_prepare_without_the_network(txt_config, no_network):
    assert prepare(txt_config, 512).built == ("corpus", "tokenizer", "tokens")
    assert no_network == []
