from __future__ import annotations

import pytest

from harness.data import DataError
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


def test_vocab_smaller_than_the_byte_alphabet_is_an_error():
    with pytest.raises(DataError, match=r"ModelConfig.vocab_size=200 is too small.*at least 257"):
        check_vocab_size(200)
