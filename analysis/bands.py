"""The band drawn around a mean over seeds, one rule for every figure (PNG and interactive).

From three seeds on, the 95% Student-t interval of the mean. From two, the range of the two seeds instead:
their 95% interval is ±12.7 standard errors (t with one degree of freedom), which says honestly that two seeds
pin nothing down but is drawn as a band that hides every other line; the range shows both runs as they are.
From one, no band. Every figure says which it drew (`describe`), and hover text gives each point's seed count.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.stats import CONFIDENCE

T_FROM = 3  # seeds from which the band is the t-interval
T_TABLE_SIZE = 200  # the interactive figures' table of t quantiles by degrees of freedom (normal beyond)


def seed_band(frame: pd.DataFrame, by: list[str], value: str = "value") -> pd.DataFrame:
    """Mean over runs of `value` per `by`, with n, low and high: the 95% t-interval from `T_FROM` seeds, the
    min-max range of two, the mean itself for one."""
    band = frame.groupby(by, dropna=False)[value].agg(mean="mean", sd="std", n="count", lo="min", hi="max").reset_index()
    with np.errstate(invalid="ignore", divide="ignore"):
        low, high = stats.t.interval(CONFIDENCE, band["n"] - 1, loc=band["mean"], scale=band["sd"] / np.sqrt(band["n"]))
    t_band = band["n"] >= T_FROM
    low = np.where(t_band, low, np.where(band["n"] == 2, band["lo"], band["mean"]))
    high = np.where(t_band, high, np.where(band["n"] == 2, band["hi"], band["mean"]))
    return band.drop(columns=["lo", "hi"]).assign(low=low, high=high)


def describe(what: str = "The band", seeds: str = "seeds") -> str:
    """The rule in words, for captions."""
    return (f"{what} is the 95% t-interval over {seeds} where there are {T_FROM} or more, the range of the two where "
            "there are two (a two-seed t-interval is ±12.7 standard errors), and absent for one.")


def t_quantiles() -> list[float]:
    """The 97.5% quantile of Student's t for 1 … T_TABLE_SIZE degrees of freedom (index 0 is df 1)."""
    return [round(float(q), 6) for q in stats.t.ppf((1 + CONFIDENCE) / 2, np.arange(1, T_TABLE_SIZE + 1))]
