"""Loss curves by arm: mean over seeds with a seed band, each arm at its best LR."""

from __future__ import annotations

import pandas as pd

from analysis.plots.bands import describe
from analysis.plots.base import Context, Plot, at_lr, draw_bands, legend, no_data, panels, seed_band
from analysis.reading.frames import curves as curve_frame

SERIES = (("train_loss", "training loss"), ("val_loss", "validation loss"))


def series(ctx: Context) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Each series' per-run curves of completed runs at every LR (arm, lr, seed, run_id, step, value), and the SQL."""
    frames, sql = {}, []
    for name, _ in SERIES:
        frames[name], text = curve_frame(ctx.sweep, name)
        sql.append(text)
    return frames, sql


def smooth(frame: pd.DataFrame, ema: float | None) -> pd.DataFrame:
    """Each run's values smoothed by a debiased exponential moving average (`ema`: the weight of the past)."""
    if not ema:
        return frame
    return frame.assign(value=frame.groupby("run_id")["value"].transform(lambda v: v.ewm(alpha=1 - ema).mean()))


def figure(ctx: Context) -> Plot:
    """Training and validation loss against step; `ctx.ema` smooths each run's training loss first."""
    frames, sql = series(ctx)
    fig, axes = panels(len(SERIES), legend_chars=ctx.name_chars)
    for ax, (name, label) in zip(axes, SERIES):
        frame = at_lr(frames[name], ctx.best_lr)
        if frame.empty:
            no_data(ax, label)
            continue
        frame = smooth(frame, ctx.ema) if name == "train_loss" else frame
        draw_bands(ax, seed_band(frame, ["arm", "step"], log=ctx.log), ctx)
        ax.set(xlabel="step", ylabel=label, title=label)
        if ctx.log:
            ax.set(xscale="log", yscale="log")
    legend(fig, axes)
    smoothing = f" Training loss smoothed per run (EMA {ctx.ema:g}) before averaging." if ctx.ema else ""
    caption = (f"Mean over completed seeds at each arm's best LR. {describe(log=ctx.log)} "
               f"Steps are averaged into buckets so a curve has at most 300 points.{smoothing}")
    return Plot("curves", "Loss curves by arm", caption, sql, fig)
