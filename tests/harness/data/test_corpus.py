from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import DataConfig
from harness.data.corpus import Corpus, resolve_source
from harness.data.errors import DataError


def load(source: Path | str, tmp_path: Path, **fields) -> Corpus:
    return Corpus(DataConfig(source=str(source), **fields), tmp_path / "cache")


def test_txt_jsonl_json_and_parquet_give_the_same_documents_and_hash(tmp_path, documents, write_corpus):
    corpora = [
        load(write_corpus(tmp_path / "c.txt", documents), tmp_path),
        load(write_corpus(tmp_path / "c.jsonl", documents), tmp_path),
        load(write_corpus(tmp_path / "c.json", documents), tmp_path),
        load(write_corpus(tmp_path / "c.parquet", documents), tmp_path),
    ]
    for corpus in corpora:
        assert corpus.documents == documents
    assert len({corpus.stats.corpus_hash for corpus in corpora}) == 1


def test_directory_and_glob_read_their_files_in_sorted_order(tmp_path, documents, write_corpus):
    folder = tmp_path / "shards"
    folder.mkdir()
    write_corpus(folder / "b.txt", documents[10:20])
    write_corpus(folder / "a.txt", documents[:10])
    (folder / "notes.md").write_text("not part of the corpus")
    assert load(folder, tmp_path).documents == documents[:20]
    assert load(folder / "*.txt", tmp_path).documents == documents[:20]


def test_text_field_names_the_column(tmp_path, documents, write_corpus):
    source = write_corpus(tmp_path / "c.jsonl", documents, field="body")
    assert load(source, tmp_path, text_field="body").documents == documents


def test_max_chars_caps_the_corpus_exactly(tmp_path, documents, write_corpus):
    corpus = load(write_corpus(tmp_path / "c.txt", documents), tmp_path, max_chars=1000)
    assert sum(map(len, corpus.documents)) == 1000
    assert "".join(corpus.documents) == "".join(documents)[:1000]


def test_manifest_remembers_the_hash_so_a_warm_start_reads_no_text(tmp_path, documents, write_corpus):
    source = write_corpus(tmp_path / "c.txt", documents)
    first = load(source, tmp_path)
    expected = first.stats
    second = load(source, tmp_path)
    assert second.stats == expected
    assert first.text_was_read and not second.text_was_read


def test_editing_a_file_changes_the_corpus_hash(tmp_path, documents, write_corpus):
    source = write_corpus(tmp_path / "c.txt", documents)
    before = load(source, tmp_path).stats.corpus_hash
    write_corpus(source, documents[:-1])
    assert load(source, tmp_path).stats.corpus_hash != before


def test_source_kinds():
    assert resolve_source(DataConfig()).kind == "default"
    assert resolve_source(DataConfig(source="roneneldan/TinyStories")).kind == "hub"


@pytest.mark.parametrize("source", ["missing/corpus.txt", "/no/such/dir", "./nowhere", "data/*.jsonl"])
def test_missing_local_path_is_a_clear_error(tmp_path, source, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError, match=r"source=.*does not exist"):
        resolve_source(DataConfig(source=source))


@pytest.mark.parametrize("source", ["mycorpus", "data/mycorpus", "data/corpus/part"])
def test_a_name_that_is_not_owner_slash_name_is_a_missing_path_not_a_hub_look_up(tmp_path, monkeypatch, source):
    """A mistyped local folder fails at once: `mycorpus` has no owner, and `data/mycorpus` is inside ./data."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    with pytest.raises(DataError, match=r"data path does not exist .*a hub dataset is named owner/name"):
        resolve_source(DataConfig(source=source))


def test_directory_without_data_files_is_an_error(tmp_path):
    (tmp_path / "readme.md").write_text("hello")
    with pytest.raises(DataError, match="holds no .txt/.jsonl/.json/.parquet files"):
        resolve_source(DataConfig(source=str(tmp_path)))


@pytest.mark.parametrize("name, extension", [("notes.csv", "'.csv'"), ("README", "'none'")])
def test_a_file_of_an_unsupported_kind_is_an_error(tmp_path, name, extension):
    (tmp_path / name).write_text("hello")
    with pytest.raises(DataError, match=f"is not a .txt/.jsonl/.json/.parquet file \\(its extension is {extension}\\)"):
        resolve_source(DataConfig(source=str(tmp_path / name)))


def test_mixed_file_kinds_are_an_error(tmp_path, documents, write_corpus):
    write_corpus(tmp_path / "a.txt", documents[:3])
    write_corpus(tmp_path / "b.jsonl", documents[:3])
    with pytest.raises(DataError, match="mixes file kinds"):
        resolve_source(DataConfig(source=str(tmp_path)))


def test_local_source_has_only_the_train_split(tmp_path, documents, write_corpus):
    source = write_corpus(tmp_path / "c.txt", documents)
    with pytest.raises(DataError, match=r"split='validation' is invalid"):
        resolve_source(DataConfig(source=str(source), split="validation"))


@pytest.mark.parametrize("content", ["", "\n\n   \n\n\t\n"])
def test_empty_corpus_is_an_error(tmp_path, content):
    source = tmp_path / "empty.txt"
    source.write_text(content)
    with pytest.raises(DataError, match="corpus is empty"):
        load(source, tmp_path).documents


@pytest.mark.parametrize("name", ["c.jsonl", "c.parquet"])
def test_missing_text_field_lists_the_columns(tmp_path, documents, write_corpus, name):
    source = write_corpus(tmp_path / name, documents[:5])
    with pytest.raises(DataError, match=r"text_field='content' is not a column.*valid columns: 'text', 'id'"):
        load(source, tmp_path, text_field="content").documents


def test_non_text_field_is_an_error(tmp_path, documents, write_corpus):
    source = write_corpus(tmp_path / "c.jsonl", documents[:5])
    with pytest.raises(DataError, match="text_field='id' .* holds int values, not text"):
        load(source, tmp_path, text_field="id").documents


def test_hub_dataset_missing_offline_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError, match="not in the local Hugging Face cache and HF_HUB_OFFLINE=1"):
        load("nobody-here/no-such-dataset", tmp_path).stats


def test_malformed_json_is_a_clear_error(tmp_path):
    source = tmp_path / "broken.jsonl"
    source.write_text('{"text": "fine"}\n{"text": unquoted}\n')
    with pytest.raises(DataError, match=r"source=.*broken.jsonl.*could not read its json files"):
        load(source, tmp_path).documents


def test_cached_hub_dataset_loads_offline(tmp_path, documents, hub_dataset, no_network):
    corpus = load(hub_dataset, tmp_path)
    assert corpus.source.kind == "hub"
    assert corpus.documents == documents
    assert corpus.stats == load(hub_dataset, tmp_path).stats
    assert no_network == []


def test_hub_dataset_missing_field_or_split_is_a_clear_error(tmp_path, hub_dataset):
    with pytest.raises(DataError,
                       match=r"text_field='story' is not a column of 'someone/tiny-corpus'; "
                             r"valid columns: 'text', 'id'"):
        load(hub_dataset, tmp_path, text_field="story").documents
    with pytest.raises(DataError, match=r"split 'validation'.* not in the local Hugging Face cache"):
        load(hub_dataset, tmp_path, split="validation").stats
