"""The independent oracle of the anytime-valid tests (tests/analysis/comparison/test_sequential.py and the CLI tests):
the e-value as the t-statistic's likelihood ratio mixed over the effect, from scipy's noncentral t by
quadrature, and the decisions it implies, read off at the three points that decide (0 and ±min_effect)."""

from __future__ import annotations

import numpy as np
from scipy import integrate, stats

ALPHA = 0.05


def oracle_e_value(diffs, null=0.0, c2=1.0):
    """∫ p(t | θ) N(θ; 0, 1/c²) dθ / p(t | 0) for the one-sample t-statistic of diffs − null: the likelihood
    ratio of t, whose density under effect θ is the noncentral t with noncentrality θ√n (1 for one pair)."""
    d = np.asarray(diffs, dtype=float) - null
    n = len(d)
    if n < 2:
        return 1.0
    t = np.sqrt(n) * d.mean() / d.std(ddof=1)
    prior_sd = 1 / np.sqrt(c2)
    mixed = integrate.quad(lambda th: stats.nct.pdf(t, n - 1, th * np.sqrt(n)) * stats.norm.pdf(th, 0, prior_sd),
                           -12 * prior_sd, 12 * prior_sd, points=[0.0], limit=200)[0]
    return mixed / stats.t.pdf(t, n - 1)


def oracle_decision(diffs, min_effect, tests=2):
    """(verdict, decided_at) of one row's differences in seed order (no divergence), peeking after each, in a table
    whose Holm family has `tests` tests, the row's loss test and tests that never reject (its divergence test, and
    other rows' with p = 1): the loss test then rejects at α/tests. The confidence sequence is {m : e-value(m) <
    1/α} (an interval around each prefix's mean) intersected over prefixes, so a point is outside it from the
    first prefix whose e-value at that point reaches the threshold, on that prefix's side of it; ±min_effect are
    read at α (negligible: the 95% sequence inside ±min_effect), 0 at α/tests."""
    above = {point: False for point in (-min_effect, 0.0, min_effect)}  # the sequence lies above the point
    below = dict(above)
    for n in range(1, len(diffs) + 1):
        mean = np.mean(diffs[:n])
        for point in above:
            if oracle_e_value(diffs[:n], point) >= (tests if point == 0.0 else 1) / ALPHA:
                (above if mean > point else below)[point] = True
        if above[-min_effect] and below[min_effect]:
            return "negligible", n
        if below[0.0]:
            return "better", n
        if above[0.0]:
            return "worse", n
    return "undecided", None
