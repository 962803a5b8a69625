from __future__ import annotations

import pytest

from harness.config import DataConfig
from harness.data import DataError, prepare
from harness.data.tokenizer import EOS, check_vocab_size, train_tokenizer

TEST_VOCAB = 512


def test_round_trips_text_including_unseen_characters(documents):
    tokenizer = train_tokenizer(documents, TEST_VOCAB, train_chars=20_000)
    samples = [documents[3], "  indented\n\ttabs and trailing spaces  ", "unseen: żółć 🙂 ∑ \x00 日本語"]
    for text in samples:
        assert tokenizer.decode(tokenizer.encode(text).ids) == text


def test_vocabulary_respects_the_requested_size(documents):
    tokenizer = train_tokenizer(documents, TEST_VOCAB, train_chars=60_000)
    assert tokenizer.get_vocab_size() == TEST_VOCAB
    assert tokenizer.token_to_id(EOS) == 0
    assert max(tokenizer.encode(" ".join(documents[:50])).ids) < TEST_VOCAB


def test_training_is_deterministic(documents):
    first = train_tokenizer(documents, TEST_VOCAB, train_chars=30_000)
    second = train_tokenizer(documents, TEST_VOCAB, train_chars=30_000)
    assert first.to_str() == second.to_str()


def test_train_chars_limits_the_training_text(documents):
    small = train_tokenizer(documents, 4096, train_chars=2_000)
    large = train_tokenizer(documents, 4096, train_chars=60_000)
    assert small.get_vocab_size() < large.get_vocab_size()


def test_vocab_smaller_than_the_byte_alphabet_is_an_error(txt_config):
    with pytest.raises(DataError, match=r"ModelConfig.vocab_size=200 is too small.*at least 257"):
        prepare(txt_config, 200)
    check_vocab_size(257)


def test_cached_tokenizer_is_reused_not_retrained(txt_config):
    first = prepare(txt_config, TEST_VOCAB)
    mtime = first.tokenizer_path.stat().st_mtime_ns
    second = prepare(txt_config, TEST_VOCAB)
    assert first.built == ("corpus", "tokenizer", "tokens")
    assert second.built == ()
    assert second.tokenizer_path.stat().st_mtime_ns == mtime
    assert second.tokenizer_hash == first.tokenizer_hash


def test_tokenizer_key_separates_vocab_size_and_training_budget(txt_config):
    base = prepare(txt_config, TEST_VOCAB)
    other_vocab = prepare(txt_config, 600)
    other_budget = prepare(txt_config.replace(tokenizer_train_chars=10_000), TEST_VOCAB)
    assert len({base.tokenizer_path, other_vocab.tokenizer_path, other_budget.tokenizer_path}) == 3
    assert other_vocab.built == other_budget.built == ("corpus", "tokenizer", "tokens")


def test_same_text_from_another_format_shares_the_cache(tmp_path, documents, write_corpus, txt_config):
    first = prepare(txt_config, TEST_VOCAB)
    jsonl = write_corpus(tmp_path / "same.jsonl", documents)
    second = prepare(txt_config.replace(source=str(jsonl)), TEST_VOCAB)
    assert second.built == ("corpus",)  # a new source is read once to learn its hash; nothing is rebuilt
    assert second.tokens_path == first.tokens_path
