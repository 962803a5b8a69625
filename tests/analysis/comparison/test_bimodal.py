"""Bimodal seed outcomes (analysis/comparison/bimodal.py): simulations with a known truth — Gaussian seeds (one mode)
are rarely flagged, even for an arm far noisier than the rest of the table; a planted plateau split always is, with
its groups; and a real sweep's report and `harness compare` say so."""

import numpy as np
import pytest

from analysis.comparison.bimodal import bimodal_cells, seed_noise

SIMULATED = 4000


def quiet_table(rng):
    """Five cells of quiet arms (seed sd 0.004): what the pooled noise is measured on."""
    return {(f"quiet{i}", 0.01): list(rng.normal(3.0, 0.004, 4)) for i in range(5)}


@pytest.mark.slow
@pytest.mark.parametrize("sd, seeds, most", [(0.04, 3, 0.002), (0.08, 3, 0.05), (0.08, 6, 0.01), (0.02, 20, 0.0)])
def test_gaussian_seeds_are_rarely_flagged_even_in_a_noisy_arm_among_quiet_ones(sd, seeds, most):
    rng = np.random.default_rng(int(sd * 1000) + seeds)
    flagged = 0
    for _ in range(SIMULATED):
        table = quiet_table(rng) | {("noisy", 0.01): list(rng.normal(3.0, sd, seeds))}
        flagged += ("noisy", 0.01) in bimodal_cells(table)
    assert flagged / SIMULATED <= most


def test_a_planted_plateau_split_is_found_with_its_groups():
    rng = np.random.default_rng(1)
    for seeds, escaped in ((3, 1), (6, 2), (10, 3)):
        values = [*rng.normal(5.9, 0.02, seeds - escaped), *rng.normal(5.0, 0.02, escaped)]
        split = bimodal_cells(quiet_table(rng) | {("plateau", 0.1): values})[("plateau", 0.1)]
        assert (split.low_seeds, split.high_seeds) == (escaped, seeds - escaped)
        assert split.low_mean == pytest.approx(5.0, abs=0.05) and split.high_mean == pytest.approx(5.9, abs=0.05)
        assert split.describe() == (f"{seeds - escaped} seeds near {split.high_mean:.3g}, {escaped} near "
                                    f"{split.low_mean:.3g}")


def test_the_pooled_noise_is_the_scaled_median_absolute_deviation_without_the_median_seeds():
    cells = {"a": [1.0, 2.0, 4.0], "b": [0.0, 1.0]}  # |deviations|: a 1, 2 (1.0 is a's median: left out); b 0.5, 0.5
    assert seed_noise(cells) == pytest.approx(1.4826 * np.median([1.0, 2.0, 0.5, 0.5]))
    assert np.isnan(seed_noise({"a": [1.0]}))
