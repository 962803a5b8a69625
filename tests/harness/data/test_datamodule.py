from __future__ import annotations

import itertools
import time

import lightning as L
import pytest
import torch

from harness.config import DataConfig, ModelConfig
from harness.data import DataError, TokenDataModule, prepare

TEST_VOCAB = 512
SEQ_LEN = 32


@pytest.fixture
def data(txt_config):
    return prepare(txt_config, TEST_VOCAB)


def test_batches_are_int64_windows_with_shifted_targets(data):
    inputs, targets = TokenDataModule(data, SEQ_LEN, batch_size=8, seed=0).train_batch(0)
    assert inputs.shape == targets.shape == (8, SEQ_LEN)
    assert inputs.dtype == targets.dtype == torch.int64
    torch.testing.assert_close(inputs[:, 1:], targets[:, :-1])
    stream = torch.from_numpy(data.train_ids.astype("int64"))
    for row_inputs, row_targets in zip(inputs, targets):
        starts = [s for s in range(len(stream) - SEQ_LEN) if torch.equal(stream[s : s + SEQ_LEN], row_inputs)]
        assert any(torch.equal(stream[s + 1 : s + SEQ_LEN + 1], row_targets) for s in starts)


def test_same_seed_same_batches_and_different_seed_different_batches(data):
    first, again, other = (TokenDataModule(data, SEQ_LEN, 8, seed) for seed in (0, 0, 1))
    for index in (0, 1, 57):
        torch.testing.assert_close(first.train_batch(index), again.train_batch(index))
        assert not torch.equal(first.train_batch(index)[0], other.train_batch(index)[0])
    assert not torch.equal(first.train_batch(0)[0], first.train_batch(1)[0])


def test_stream_is_step_addressable(data):
    module = TokenDataModule(data, SEQ_LEN, 8, seed=3)
    resumed = list(itertools.islice(module.train_batches(start=5), 3))
    for offset, batch in enumerate(resumed):
        torch.testing.assert_close(batch, module.train_batch(5 + offset))
    torch.testing.assert_close(next(iter(module.train_dataloader())), module.train_batch(0))


def test_validation_windows_are_the_same_for_every_arm(txt_config):
    arms = [ModelConfig(vocab_size=TEST_VOCAB, d_model=64),
            ModelConfig(vocab_size=TEST_VOCAB, n_layers=2, qk_norm="rmsnorm")]
    prepared = [prepare(txt_config, arm.vocab_size) for arm in arms]
    modules = [TokenDataModule(p, SEQ_LEN, batch_size, seed) for p, batch_size, seed in zip(prepared, (8, 5), (0, 1))]
    flattened = [tuple(torch.cat(part) for part in zip(*module.val_dataloader())) for module in modules]
    torch.testing.assert_close(flattened[0], flattened[1])
    windows = modules[0].n_val_windows
    assert windows == (txt_config.val_tokens - 1) // SEQ_LEN
    assert len(modules[1].val_dataloader()) == -(-windows // 5)
    stream = torch.from_numpy(prepared[0].val_ids.astype("int64"))
    torch.testing.assert_close(flattened[0][0].flatten(), stream[: windows * SEQ_LEN])


def test_probe_batch_is_fixed_and_bounded(data):
    probe = TokenDataModule(data, SEQ_LEN, 8, seed=0).probe_batch(4)
    other = TokenDataModule(data, SEQ_LEN, 2, seed=9).probe_batch(4)
    torch.testing.assert_close(probe, other)
    assert probe[0].shape == (4, SEQ_LEN)
    with pytest.raises(DataError, match=r"probe_seqs=1000 is invalid: the validation split holds only 63 windows"):
        TokenDataModule(data, SEQ_LEN, 8, seed=0).probe_batch(1000)


def test_seq_len_beyond_the_validation_split_is_an_error(data, txt_config):
    with pytest.raises(DataError, match=r"seq_len=4096 is invalid: the validation split has only 2048 tokens"):
        TokenDataModule(data, 4096, 8, seed=0)


def test_seq_len_beyond_the_training_split_is_an_error(tmp_path, documents, write_corpus):
    source = write_corpus(tmp_path / "small.txt", documents[:40])
    small = prepare(DataConfig(source=str(source), cache_dir=str(tmp_path / "cache"), val_tokens=64), TEST_VOCAB)
    too_long = len(small.train_ids)
    with pytest.raises(DataError,
                       match=rf"seq_len={too_long} is invalid: the training split has only {too_long} tokens"):
        TokenDataModule(small, too_long, 8, seed=0)


def test_fetching_a_batch_costs_far_less_than_a_millisecond(data):
    module = TokenDataModule(data, 128, 16, seed=0)
    module.train_batch(0)
    started = time.perf_counter()
    for index in range(500):
        module.train_batch(index)
    assert (time.perf_counter() - started) / 500 < 1e-3


class BatchRecorder(L.LightningModule):
    """The smallest trainable module that remembers which batches it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(TEST_VOCAB, 4)
        self.seen: list[torch.Tensor] = []

    def training_step(self, batch, batch_idx):
        inputs, _ = batch
        self.seen.append(inputs.clone())
        return self.embedding(inputs).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit(data, max_steps: int, ckpt_path=None) -> tuple[L.Trainer, BatchRecorder]:
    trainer = L.Trainer(
        max_steps=max_steps, accumulate_grad_batches=2, accelerator="cpu", logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    module = BatchRecorder()
    trainer.fit(module, TokenDataModule(data, SEQ_LEN, 4, seed=7), ckpt_path=ckpt_path)
    return trainer, module


def test_resumed_lightning_run_sees_the_same_batches(data, tmp_path):
    _, uninterrupted = fit(data, max_steps=4)
    first_half_trainer, first_half = fit(data, max_steps=2)
    first_half_trainer.save_checkpoint(tmp_path / "half.ckpt")
    _, second_half = fit(data, max_steps=4, ckpt_path=tmp_path / "half.ckpt")
    assert len(uninterrupted.seen) == 8
    torch.testing.assert_close(first_half.seen + second_half.seen, uninterrupted.seen)
