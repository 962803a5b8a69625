from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from harness.data import DataError, prepare

TEST_VOCAB = 512


def test_bad_vocab_size_fails_before_any_text_is_read(txt_config):
    with pytest.raises(DataError, match=r"ModelConfig.vocab_size=200 is too small.*at least 257"):
        prepare(txt_config, 200)
    assert not (Path(txt_config.cache_dir) / "corpora").exists()


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


def test_validation_split_is_the_end_of_the_stream(txt_config):
    data = prepare(txt_config, TEST_VOCAB)
    assert len(data.val_ids) == txt_config.val_tokens
    whole = np.fromfile(data.tokens_path, dtype=np.uint16)
    np.testing.assert_array_equal(data.val_ids, whole[-txt_config.val_tokens :])
    np.testing.assert_array_equal(data.train_ids, whole[: -txt_config.val_tokens])


def test_changing_the_split_size_re_encodes_nothing(txt_config):
    first = prepare(txt_config, TEST_VOCAB)
    second = prepare(txt_config.replace(val_tokens=1000), TEST_VOCAB)
    assert second.built == () and second.tokens_path == first.tokens_path
    np.testing.assert_array_equal(second.val_ids, first.val_ids[-1000:])


def test_val_tokens_beyond_the_corpus_is_an_error(txt_config):
    with pytest.raises(DataError, match=r"val_tokens=10000000 is invalid: the corpus .* has only \d+ tokens"):
        prepare(txt_config.replace(val_tokens=10_000_000), TEST_VOCAB)


def test_hub_dataset_prepares_like_a_local_file(txt_config, hub_dataset, no_network):
    local = prepare(txt_config, TEST_VOCAB)
    hub = prepare(txt_config.replace(source=hub_dataset), TEST_VOCAB)
    assert hub.built == ("corpus",) and hub.tokens_path == local.tokens_path
    assert no_network == []


RACER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from harness.config import DataConfig
    from harness.data import prepare

    source, cache, me, other = sys.argv[1:5]
    Path(me).touch()
    while not Path(other).exists():  # start together: both find an empty cache
        time.sleep(0.001)
    data = prepare(DataConfig(source=source, cache_dir=cache, val_tokens=2048), 512)
    print(json.dumps({"built": data.built, "tokens": str(data.tokens_path), "tokenizer": data.tokenizer_hash}))
    """
)


@pytest.mark.slow
def test_two_processes_racing_build_one_valid_cache(tmp_path, txt_config, documents):
    cache = tmp_path / "race-cache"
    ready = [tmp_path / "ready-a", tmp_path / "ready-b"]
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, txt_config.source, str(cache), str(me), str(other)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for me, other in (ready, ready[::-1])
    ]
    results = []
    for racer in racers:
        out, _ = racer.communicate(timeout=120)
        assert racer.returncode == 0
        results.append(json.loads(out.strip().splitlines()[-1]))

    # Each step ran exactly once; the process that did not run it waited and reused its result.
    assert sorted(results[0]["built"] + results[1]["built"]) == ["corpus", "tokenizer", "tokens"]
    assert results[0]["tokens"] == results[1]["tokens"]
    assert results[0]["tokenizer"] == results[1]["tokenizer"]
    assert not list(cache.rglob("*.tmp"))
    reread = prepare(txt_config.replace(cache_dir=str(cache)), TEST_VOCAB)
    assert reread.built == ()
    assert reread.n_documents == len(documents)
    assert reread.tokenizer.decode(reread.val_ids[-50:].tolist()) in documents[-1]


def test_fast_preparation_prints_nothing(txt_config, capfd):
    prepare(txt_config, TEST_VOCAB)  # cold, but every step takes well under the progress-bar delay
    prepare(txt_config, TEST_VOCAB)
    assert capfd.readouterr() == ("", "")


def test_prepare_imports_neither_torch_nor_datasets():
    probe = ("import sys; from harness.data import prepare; print(sorted({'torch', 'lightning', 'datasets'} & "
             "set(sys.modules)))")
    assert (subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
            == "[]")
