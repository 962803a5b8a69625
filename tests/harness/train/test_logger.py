"""ResultsLogger: what a Lightning logger hands it lands in the store, readable through `db.connect`."""

import pytest

import db
from harness.train.logger import ResultsLogger


def read(results, sql):
    return db.connect(results).execute(sql).fetchall()


def test_metrics_layers_events_and_status_read_back(tmp_path):
    logger = ResultsLogger(tmp_path, "run-1", config={"d_model": 64, "lr": 1e-3}, seed=3, params=1000)
    logger.log_hyperparams({"extra": 1})
    logger.log_metrics({"train_loss": 2.5, "grad_norm": 0.7}, step=1)
    logger.log_metrics({"train_loss": 2.25, "val_loss": 2.4}, step=2)
    logger.log_layer_metrics(2, "attn_logit_max", [[1.0, 2.0], [3.0, 4.0]])
    logger.log_layer_metrics(2, "param_rms", [0.1, 0.2])
    logger.log_event(2, "loss_spike", 2.25, "detail")
    logger.summary = {"final_train_loss": 2.25}
    logger.finalize("success")
    assert read(tmp_path,
                "SELECT run_id, seed, status, d_model, lr, params, final_val_loss, final_train_loss FROM runs") == [
        ("run-1", 3, "completed", 64, 1e-3, 1000, 2.4, 2.25)
    ]
    assert read(tmp_path, "SELECT step, name, value FROM metrics ORDER BY step, name") == [
        (1, "grad_norm", 0.7), (1, "train_loss", 2.5), (2, "train_loss", 2.25), (2, "val_loss", 2.4)
    ]
    assert read(tmp_path,
                "SELECT layer, head, value FROM layer_metrics WHERE name = 'attn_logit_max' ORDER BY layer, head") == [
        (0, 0, 1.0), (0, 1, 2.0), (1, 0, 3.0), (1, 1, 4.0)
    ]
    assert (read(tmp_path, "SELECT layer, head FROM layer_metrics WHERE name = 'param_rms' ORDER BY layer")
            == [(0, None), (1, None)])
    assert read(tmp_path, "SELECT kind FROM events ORDER BY kind") == [("hyperparams",), ("loss_spike",)]
    assert '"final_train_loss": 2.25' in read(tmp_path, "SELECT summary FROM runs")[0][0]


@pytest.mark.parametrize(
    "diverge, lightning_status, stored",
    [(True, "success", ("diverged", 5)), (False, "failed", ("failed", None)), (False, "finished", ("completed", None))],
)
def test_finalize_status(tmp_path, diverge, lightning_status, stored):
    logger = ResultsLogger(tmp_path, "run-2")
    logger.log_metrics({"train_loss": 1.0}, step=5)
    if diverge:
        logger.log_event(5, "diverged", float("nan"), "loss is nan")
    logger.finalize(lightning_status)
    assert read(tmp_path, "SELECT status, diverged_at_step FROM runs") == [stored]
    logger.finalize("success")  # a second finalize (Lightning may call it again) changes nothing
    assert read(tmp_path, "SELECT status FROM runs") == [(stored[0],)]
