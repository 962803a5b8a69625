"""Fixtures shared by every test package: a small real corpus (the Python language reference), prepared once
per session, and a tiny model/run setup that trains in seconds (tests/harness/train, tests/cli); one torch thread in
each pytest-xdist worker."""

from __future__ import annotations

import os
import pydoc_data.topics
import sys
from pathlib import Path

import pytest

from harness.config import DataConfig, ModelConfig, TrainConfig
from harness.presets import from_name

sys.path.insert(0, str(Path(__file__).parent))  # `system_packages`, shared by the SLURM and the browser fixtures


def pytest_configure(config) -> None:
    # The workers of `-n 2` (pyproject.toml) share the machine's cores: torch's default, a thread per core in each,
    # would oversubscribe them.
    if "PYTEST_XDIST_WORKER" in os.environ:
        import torch

        torch.set_num_threads(1)
        # ... and the processes a test starts (`harness run`, a sweep's workers: experiments.backends.devices
        # .capped_threads): beside a busy neighbour, a second OpenMP thread spins at every barrier, which tripled a
        # sweep test's CPU time under load.
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"


def pytest_collection_modifyitems(config, items) -> None:
    # pytest-xdist (`--dist loadfile --no-loadscope-reorder`, pyproject.toml) hands out whole files in this order:
    # files with slow tests first, so that the last files the two workers take are short ones and they end together
    # (with files of many tests first, two-test sweep files of 27-36 s came last and one worker idled 31-40 s). The
    # sort is stable: each file's tests stay together and in their order.
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


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

TRAIN_VOCAB = 512


@pytest.fixture(scope="session")
def train_data(train_data_cfg):
    """The corpus prepared (tokenizer + token cache) once for the session."""
    from harness.data import prepare

    return prepare(train_data_cfg, TRAIN_VOCAB)


@pytest.fixture(scope="session")
def tiny_model_cfg() -> ModelConfig:
    return from_name("tiny", vocab_size=TRAIN_VOCAB, d_model=32, n_heads=2, n_kv_heads=1, max_seq_len=64)


@pytest.fixture(scope="session")
def tiny_train_cfg() -> TrainConfig:
    """A few-second run with every telemetry path active (probes, validation, checkpoints, spike windows)."""
    return TrainConfig(
        steps=8, batch_size=4, seq_len=32, lr=3e-3, warmup_steps=2, probe_every=4, probe_seqs=2,
        val_every=4, val_seqs=6, spike_window=4, checkpoint_every=4,
    )


@pytest.fixture
def run_tiny(tmp_path, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg):
    """`run_tiny(run_id="r", resume=False, model=…, **train_changes)` trains in-process into tmp_path/results;
    returns (RunOutcome, results_dir)."""
    from harness.train.run import RunSpec, train_run

    results = tmp_path / "results"

    def run(run_id: str = "r", resume: bool = False, model: ModelConfig | None = None, **train_changes):
        spec = RunSpec(model or tiny_model_cfg, tiny_train_cfg.replace(**train_changes), train_data_cfg, results,
                       run_id, resume)
        return train_run(spec, train_data, progress=False), results

    return run
