import math

import pytest

import synthetic
from analysis.frames import load_sweep
from analysis.stability import stability


@pytest.fixture(scope="module")
def table(planted_store):
    frame, _ = stability(load_sweep(planted_store[0], "planted"))
    return frame.set_index("arm")


def test_divergences_are_counted_with_their_median_step(table):
    steps = sorted(synthetic.DIVERGED.values())
    assert table.at["unstable", "runs"] == 6 and table.at["unstable", "diverged"] == 2
    assert table.at["unstable", "divergence_rate"] == pytest.approx(2 / 6)
    assert table.at["unstable", "median_diverged_step"] == pytest.approx(sum(steps) / 2)
    assert table.at["baseline", "diverged"] == 0


def test_spike_score_is_the_percentage_of_steps_that_spiked(table):
    # one planted spike per run; completed runs log 60 training losses, diverged ones stop early
    assert table.at["baseline", "loss_spikes"] == 6
    assert table.at["baseline", "spike_score"] == pytest.approx(100 / 60)
    per_run = [100 / 60] * 4 + [100 / (step + 1) for step in synthetic.DIVERGED.values()]
    assert table.at["unstable", "spike_score"] == pytest.approx(sum(per_run) / 6)


def test_attention_peak_layer_and_logit_growth(table):
    # synthetic logits: 5·growth·(1 + layer) + head, growing ×4 over the run: the peak is layer 1, head 1
    assert table.at["baseline", "peak_attn_logit"] == pytest.approx(5 * 4 * 2 + 1)
    assert table.at["baseline", "peak_layer"] == 1
    assert table.at["baseline", "logit_growth"] == pytest.approx(4.0)
    assert table.at["baseline", "log_z_growth"] == pytest.approx(math.log(4.0))
