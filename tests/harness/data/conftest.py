"""Shared fixtures: a small real-text corpus in every supported file format and as a cached hub dataset."""

from __future__ import annotations

import json
import pydoc_data.topics
import shutil
import socket
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.config import DataConfig

TEST_VOCAB = 512


def paragraphs(max_chars: int) -> list[str]:
    """Real English paragraphs (from the Python language reference) with no blank lines inside, in order."""
    found: list[str] = []
    total = 0
    for topic in pydoc_data.topics.topics.values():
        for paragraph in topic.split("\n\n"):
            paragraph = paragraph.strip()
            if paragraph and total < max_chars:
                found.append(paragraph)
                total += len(paragraph)
    return found


@pytest.fixture(scope="session")
def documents() -> list[str]:
    return paragraphs(60_000)


def write_corpus(path: Path, documents: list[str], field: str = "text") -> Path:
    """Write `documents` in the format the suffix names: .txt (blank-line separated), .jsonl, .json (an array) or
    .parquet."""
    if path.suffix == ".txt":
        path.write_text("\n\n".join(documents) + "\n")
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({field: d, "id": i}) + "\n" for i, d in enumerate(documents)))
    elif path.suffix == ".json":
        path.write_text(json.dumps([{field: d, "id": i} for i, d in enumerate(documents)]))
    else:
        pq.write_table(pa.table({field: documents, "id": list(range(len(documents)))}), path)
    return path


@pytest.fixture(name="write_corpus")
def write_corpus_fixture():
    """The corpus writer, as a fixture because test modules cannot import conftest under importlib mode."""
    return write_corpus


@pytest.fixture
def txt_config(tmp_path: Path, documents: list[str]) -> DataConfig:
    """A local .txt corpus of ~60k characters with a private cache and a small validation split."""
    source = write_corpus(tmp_path / "corpus.txt", documents)
    return DataConfig(source=str(source), cache_dir=str(tmp_path / "cache"), val_tokens=2048)


HUB_NAME = "someone/tiny-corpus"


@pytest.fixture
def hub_dataset(tmp_path: Path, documents: list[str], monkeypatch) -> str:
    """A hub dataset as a download leaves it in the Hugging Face cache (no network here to download one).

    `datasets` itself converts a parquet file; its output is moved to where a download of `HUB_NAME` lives
    (`<cache>/<owner>___<name>/<config>/<version>/<hash>/<name>-<split>.arrow`), and the cache is pointed there.
    """
    import datasets
    import datasets.config

    source = write_corpus(tmp_path / "hub-source.parquet", documents)
    datasets.load_dataset("parquet", data_files=[str(source)], split="train", cache_dir=str(tmp_path / "build"))
    built = next((tmp_path / "build" / "parquet").glob("*/*/*/parquet-train.arrow")).parent
    owner, name = HUB_NAME.split("/")
    cached = tmp_path / "hf-cache" / f"{owner}___{name}" / "default" / "0.0.0" / "0123abcd"
    cached.mkdir(parents=True)
    shutil.copy(built / "parquet-train.arrow", cached / f"{name}-train.arrow")
    info = json.loads((built / "dataset_info.json").read_text())
    info["builder_name"] = info["dataset_name"] = info["splits"]["train"]["dataset_name"] = name
    (cached / "dataset_info.json").write_text(json.dumps(info))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a failed cache look-up must not wait on a download
    return HUB_NAME


@pytest.fixture
def no_network(monkeypatch) -> list[tuple]:
    """Every connection or name look-up is recorded and refused (some libraries swallow the refusal)."""
    attempts: list[tuple] = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network access is forbidden in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return attempts
