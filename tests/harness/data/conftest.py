"""Shared fixtures: a small real-text corpus written in every supported file format, and a private cache."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pydoc_data.topics
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
    """Write `documents` in the format the suffix names: .txt (blank-line separated), .jsonl or .parquet."""
    if path.suffix == ".txt":
        path.write_text("\n\n".join(documents) + "\n")
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({field: d, "id": i}) + "\n" for i, d in enumerate(documents)))
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
