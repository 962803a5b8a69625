import pytest

import db
import synthetic
from analysis.reading.frames import load_sweep
from analysis.signals.sensitivity import lr_sensitivity

L0 = synthetic.INITIAL_LOSS + 0.02  # the synthetic runs' first training loss

# arm → lr → per-seed final val loss, None = diverged
GRID = {
    "a": {1e-3: [3.2, 3.4], 1e-2: [3.0, 3.1], 1e-1: [3.5, None]},
    "b": {1e-3: [3.1, 3.1], 1e-2: [None, None], 1e-1: [None, None]},
    "c": {1e-3: [3.0], 1e-2: [9.0]},  # a completed run worse than at initialization counts as ℓ₀
}


@pytest.fixture(scope="module")
def sensitivity(tmp_path_factory):
    results = tmp_path_factory.mktemp("lr") / "results"
    for arm, by_lr in GRID.items():
        for lr, finals in by_lr.items():
            for seed, final in enumerate(finals):
                synthetic.write_run(results, f"{arm}-{lr}-{seed}", sweep="lr", arm=arm, seed=seed, lr=lr, steps=12,
                                    final=3.0 if final is None else final, diverge_at=5 if final is None else None)
    table, _ = lr_sensitivity(load_sweep(results, "lr"), "final_val_loss")
    return table.set_index("arm")


def test_lr_sensitivity_matches_a_hand_computation(sensitivity):
    a = [(3.2 + 3.4) / 2, (3.0 + 3.1) / 2, (3.5 + L0) / 2]  # ℓ(η); the diverged seed counts as ℓ₀
    assert sensitivity.at["a", "lr_sensitivity"] == pytest.approx(sum(x - min(a) for x in a) / 3)
    assert sensitivity.at["b", "lr_sensitivity"] == pytest.approx((0 + (L0 - 3.1) + (L0 - 3.1)) / 3)
    assert sensitivity.at["c", "lr_sensitivity"] == pytest.approx((L0 - 3.0) / 2)


def test_best_lr_and_loss_per_arm(sensitivity):
    assert sensitivity.at["a", "best_lr"] == 1e-2 and sensitivity.at["a", "best_loss"] == pytest.approx(3.05)
    assert sensitivity.at["b", "best_lr"] == 1e-3 and sensitivity.at["b", "lrs"] == 3
    assert sensitivity.at["a", "initial_loss"] == pytest.approx(L0)


def test_l0_is_the_loss_at_step_0_whatever_log_every_is(tmp_path):
    # logged every 10th step from step 10 on (the runs start at step 1 here, as training logs them), ℓ₀ from step 0
    for seed, (lr, final) in enumerate([(1e-3, 3.0), (1e-2, None)]):
        writer = db.RunWriter.open(tmp_path, f"r{seed}", sweep="l0", arm="a", seed=0, config={"lr": lr})
        writer.log_metrics(0, {"initial_loss": 8.3})
        for step in range(10, 51, 10):
            writer.log_metrics(step, {"train_loss": 6.0 - step / 20, "val_loss": final or 6.0})
        writer.close("completed" if final else "diverged", diverged_at_step=None if final else 50)
    table, _ = lr_sensitivity(load_sweep(tmp_path, "l0"), "final_val_loss")
    row = table.set_index("arm").loc["a"]
    assert row["initial_loss"] == 8.3 and row["initial_loss_from"] == "step 0"
    assert row["lr_sensitivity"] == pytest.approx((0 + (8.3 - 3.0)) / 2)
