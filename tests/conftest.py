"""Fixtures shared by every test package: a small real corpus (the Python language reference)."""

from __future__ import annotations

from pathlib import Path

import pydoc_data.topics
import pytest

from harness.config import DataConfig


@pytest.fixture(scope="session")
def train_corpus(tmp_path_factory) -> Path:
    """~120k characters of the Python language reference as one .txt file."""
    path = tmp_path_factory.mktemp("corpus") / "reference.txt"
    text, total = [], 0
    for topic in pydoc_data.topics.topics.values():
        if total > 120_000:
            break
        text.append(topic.strip())
        total += len(topic)
    path.write_text("\n\n".join(text) + "\n")
    return path


@pytest.fixture(scope="session")
def train_data_cfg(train_corpus, tmp_path_factory) -> DataConfig:
    return DataConfig(source=str(train_corpus), val_tokens=4096, cache_dir=str(tmp_path_factory.mktemp("cache")))
