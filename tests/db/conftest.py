"""Shared helpers for the results-store tests: a small finished run written through the real writer."""

import pytest

import db


def _write_run(results, run_id, *, val_losses=(3.0, 2.5, 2.7), status="completed", steps=30, **identity):
    """A run logging `train_loss` every step and `val_loss` every 10 steps (values from `val_losses`)."""
    identity = {"sweep": "s", "arm": "a", "seed": 0, "config": {"d_model": 64, "qk_norm": "none"}, **identity}
    writer = db.RunWriter.open(results, run_id, **identity)
    for step in range(steps):
        writer.log_metrics(step, {"train_loss": 4.0 - step / 100})
        if step % 10 == 9:
            writer.log_metrics(step, {"val_loss": val_losses[step // 10]})
    if status is not None:
        writer.close(status, diverged_at_step=steps - 1 if status == "diverged" else None)
    return writer


@pytest.fixture
def results(tmp_path):
    """A results directory path (not created: the first writer creates it)."""
    return tmp_path / "results"


@pytest.fixture
def write_run():
    """`write_run(results, run_id, val_losses=..., status=..., steps=..., **identity)` → the writer used."""
    return _write_run
