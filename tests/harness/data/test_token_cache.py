from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from harness.data import prepare
from harness.data.cache import build_once, write_atomically
from harness.data.token_cache import token_dtype

TEST_VOCAB = 512


def test_dtype_is_the_narrowest_that_holds_every_id():
    assert token_dtype(512) == np.uint16
    assert token_dtype(65536) == np.uint16
    assert token_dtype(65537) == np.uint32


def test_tokens_decode_back_to_the_documents(txt_config, documents):
    data = prepare(txt_config, TEST_VOCAB)
    stream = np.concatenate([data.train_ids, data.val_ids])
    assert stream.dtype == np.uint16 and stream.max() < TEST_VOCAB
    ends = np.flatnonzero(stream == data.eos_id)
    assert len(ends) == len(documents) == data.n_documents
    pieces = np.split(stream, ends + 1)[:-1]
    assert [data.tokenizer.decode(piece[:-1].tolist()) for piece in pieces] == documents


def test_validation_split_is_the_end_of_the_stream(txt_config):
    data = prepare(txt_config, TEST_VOCAB)
    assert len(data.val_ids) == txt_config.val_tokens
    whole = np.fromfile(data.tokens_path, dtype=np.uint16)
    np.testing.assert_array_equal(data.val_ids, whole[-txt_config.val_tokens :])
    np.testing.assert_array_equal(data.train_ids, whole[: -txt_config.val_tokens])


def test_val_tokens_beyond_the_corpus_is_an_error(txt_config):
    from harness.data import DataError

    with pytest.raises(DataError, match=r"val_tokens=10000000 is invalid: the corpus .* has only \d+ tokens"):
        prepare(txt_config.replace(val_tokens=10_000_000), TEST_VOCAB)


def test_failed_build_leaves_neither_file_nor_temp(tmp_path):
    def broken(path: Path) -> None:
        path.write_text("half")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        write_atomically(tmp_path / "artifact.bin", broken)
    assert list(tmp_path.iterdir()) == []
    assert build_once(tmp_path / "artifact.bin", lambda path: path.write_text("whole"))
    assert not build_once(tmp_path / "artifact.bin", lambda path: path.write_text("again"))
    assert (tmp_path / "artifact.bin").read_text() == "whole"


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
