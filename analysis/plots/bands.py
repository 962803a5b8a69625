"""The band drawn around a mean over seeds, one rule for every figure (PNG and interactive).

From three seeds on, the 95% Student-t interval of the mean. From two, the range of the two seeds instead:
their 95% interval is ±12.7 standard errors (t with one degree of freedom), which says honestly that two seeds
pin nothing down but is drawn as a band that hides every other line; the range shows both runs as they are.
From one, no band. Every figure says which it drew (`describe`), and hover text gives each point's seed count.

On a log axis (attention and output logits, which grow by decades) the same rule is applied to the logarithms:
the line is the geometric mean and the band the t-interval of the mean log, exponentiated. An arithmetic interval
there is dominated by the largest seed, its lower end falls below zero, which a log axis cannot draw, and the band
degenerates into a rectangle down to the axis; the interval of the logs is positive and follows the curve.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.comparison.stats import CONFIDENCE

T_FROM = 3  # seeds from which the band is the t-interval
T_TABLE_SIZE = 200  # the interactive figures' table of t quantiles by degrees of freedom (normal beyond)


def seed_band(frame: pd.DataFrame, by: list[str], value: str = "value", log: bool = False) -> pd.DataFrame:
    """Mean over runs of `value` per `by`, with n, low and high: the 95% t-interval from `T_FROM` seeds, the
    min-max range of two, the mean itself for one. `log`: for a log axis, all of it computed on the logarithms
    of the positive values (a geometric mean and its interval; values ≤ 0 have no place on such an axis)."""
    if log:
        positive = frame[frame[value] > 0]
        band = seed_band(positive.assign(**{value: np.log(positive[value])}), by, value)
        return band.assign(mean=np.exp(band["mean"]), low=np.exp(band["low"]), high=np.exp(band["high"]))
    band = (frame.groupby(by, dropna=False)[value]
            .agg(mean="mean", sd="std", n="count", lo="min", hi="max").reset_index())
    with np.errstate(invalid="ignore", divide="ignore"):  # seeds that agree exactly have a band of width 0, not NaN
        half = stats.t.ppf((1 + CONFIDENCE) / 2, band["n"] - 1) * band["sd"] / np.sqrt(band["n"])
    low, high = band["mean"] - half, band["mean"] + half
    t_band = band["n"] >= T_FROM
    low = np.where(t_band, low, np.where(band["n"] == 2, band["lo"], band["mean"]))
    high = np.where(t_band, high, np.where(band["n"] == 2, band["hi"], band["mean"]))
    return band.drop(columns=["lo", "hi"]).assign(low=low, high=high)


def describe(what: str = "The band", seeds: str = "seeds", log: bool = False) -> str:
    """The rule in words, for captions (`log`: the figure's log axes show geometric means and their intervals)."""
    rule = (f"{what} is the 95% t-interval over {seeds} where there are {T_FROM} or more, the range of the two where "
            "there are two (a two-seed t-interval is ±12.7 standard errors), and absent for one.")
    if log:
        rule += " On the log axes the line is the geometric mean and the interval is that of the mean logarithm."
    return rule


def t_quantiles() -> list[float]:
    """The 97.5% quantile of Student's t for 1 … T_TABLE_SIZE degrees of freedom (index 0 is df 1)."""
    return [round(float(q), 6) for q in stats.t.ppf((1 + CONFIDENCE) / 2, np.arange(1, T_TABLE_SIZE + 1))]
