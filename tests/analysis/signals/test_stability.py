import math

import pytest

import synthetic
from analysis.reading.frames import load_sweep
from analysis.signals.stability import stability


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


def test_spike_score_without_a_summary_is_spikes_over_trained_steps(table):
    # one planted spike per run, no run summary: spikes over the last step (completed runs end at step 59)
    assert table.at["baseline", "loss_spikes"] == 6
    assert table.at["baseline", "spike_score"] == pytest.approx(100 / 59)
    per_run = [100 / 59] * 4 + [100 / step for step in synthetic.DIVERGED.values()]
    assert table.at["unstable", "spike_score"] == pytest.approx(sum(per_run) / 6)


def test_spike_score_is_the_run_summarys_not_a_share_of_logged_rows(tmp_path):
    # logged every 5th step: 6 spikes in 60 trained steps is 10%, whatever the 12 logged rows say
    spikes = (11, 21, 31, 41, 51, 55)
    synthetic.write_run(tmp_path, "summed", sweep="s", arm="a", seed=0, lr=1e-3, final=3.0, steps=61, log_every=5,
                        spikes=spikes, summary={"loss_spike_score": 10.0, "steps": 60})
    synthetic.write_run(tmp_path, "bare", sweep="s", arm="b", seed=0, lr=1e-3, final=3.0, steps=61, log_every=5,
                        spikes=spikes)
    frame, _ = stability(load_sweep(tmp_path, "s"))
    scores = frame.set_index("arm")["spike_score"]
    assert scores["a"] == 10.0 and scores["b"] == pytest.approx(100 * 6 / 60)


def test_attention_peak_layer_and_logit_growth(table):
    # synthetic logits: 5·growth·(1 + layer) + head, growing ×4 over the run: the peak is layer 1, head 1
    assert table.at["baseline", "peak_attn_logit"] == pytest.approx(5 * 4 * 2 + 1)
    assert table.at["baseline", "peak_layer"] == 1
    assert table.at["baseline", "logit_growth"] == pytest.approx(4.0)
    assert table.at["baseline", "log_z_growth"] == pytest.approx(math.log(4.0))
