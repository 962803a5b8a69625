"""The k-σ rolling spike rule on synthetic series: planted spikes found, smooth series clean, score, state."""

import math
import random

import pytest

from harness.train.spikes import SpikeDetector


def noisy_decay(n: int, seed: int = 0) -> list[float]:
    """A loss-like curve: slow exponential decay plus small Gaussian noise."""
    rng = random.Random(seed)
    return [2.0 + math.exp(-i / 1000) + rng.gauss(0, 0.02) for i in range(n)]


def flagged(series: list[float], window: int, sigma: float) -> list[int]:
    detector = SpikeDetector(window, sigma)
    return [i for i, value in enumerate(series) if detector.update(value)]


@pytest.mark.parametrize("window, sigma", [(128, 6.0), (1000, 7.0)])
def test_planted_spikes_are_found_and_nothing_else(window, sigma):
    series = noisy_decay(3000)
    planted = [1200, 1700, 2500]
    for i in planted:
        series[i] += 2.0  # 100 noise σ above the curve
    assert flagged(series, window, sigma) == planted


def test_smooth_series_has_no_spikes():
    assert flagged(noisy_decay(3000, seed=1), 128, 6.0) == []
    assert flagged([5.0 - 1e-3 * i for i in range(500)], 128, 6.0) == []  # noiseless descent


def test_nothing_is_judged_before_the_window_is_full():
    series = [1.0, 1.1, 0.9, 1.0, 100.0]
    assert flagged(series, window=5, sigma=3.0) == []
    assert flagged(series, window=4, sigma=3.0) == [4]


def test_constant_window_and_drops_are_not_spikes():
    assert flagged([1.0] * 10 + [1.5], window=5, sigma=3.0) == []  # σ = 0: no scale to judge against
    assert flagged([1.0, 1.1, 0.9, 1.0, 1.05, -50.0], window=5, sigma=3.0) == []  # only rises are spikes


def test_spike_score_is_the_percentage_of_values_that_spiked():
    series = noisy_decay(400)
    series[300] += 2.0
    detector = SpikeDetector(128, 6.0)
    for value in series:
        detector.update(value)
    assert detector.spikes == 1
    assert detector.score == pytest.approx(100 / 400)


def test_non_finite_values_are_left_to_the_divergence_rule():
    detector = SpikeDetector(3, 3.0)
    for value in [1.0, 1.1, 0.9, float("nan"), float("inf")]:
        assert not detector.update(value)
    assert detector.values_seen == 3 and list(detector.history) == [1.0, 1.1, 0.9]


def test_state_round_trip_continues_identically():
    series = noisy_decay(600)
    series[450] += 2.0
    whole = SpikeDetector(128, 6.0)
    whole_flags = [whole.update(v) for v in series]
    first, second = SpikeDetector(128, 6.0), SpikeDetector(128, 6.0)
    flags = [first.update(v) for v in series[:300]]
    second.load_state_dict(first.state_dict())
    flags += [second.update(v) for v in series[300:]]
    assert flags == whole_flags and second.score == whole.score
