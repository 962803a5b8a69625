"""Loss curves by arm: mean over seeds with a 95% band, each arm at its best LR."""

from __future__ import annotations

from analysis.frames import curves as curve_frame
from analysis.plots.base import Context, Plot, at_lr, draw_bands, legend, no_data, panels, seed_band

SERIES = (("train_loss", "training loss"), ("val_loss", "validation loss"))


def figure(ctx: Context) -> Plot:
    """Training and validation loss against step; `ctx.ema` smooths each run's training loss first."""
    fig, axes = panels(len(SERIES), legend_chars=ctx.name_chars)
    sql = []
    for ax, (name, label) in zip(axes, SERIES):
        frame, text = curve_frame(ctx.sweep, name)
        sql.append(text)
        frame = at_lr(frame, ctx.best_lr)
        if frame.empty:
            no_data(ax, label)
            continue
        if ctx.ema and name == "train_loss":
            frame["value"] = frame.groupby("run_id")["value"].transform(lambda v: v.ewm(alpha=1 - ctx.ema).mean())
        draw_bands(ax, seed_band(frame, ["arm", "step"]), ctx)
        ax.set(xlabel="step", ylabel=label, title=label)
        if ctx.log:
            ax.set(xscale="log", yscale="log")
    legend(fig, axes)
    smoothing = f" Training loss smoothed per run (EMA {ctx.ema:g}) before averaging." if ctx.ema else ""
    caption = ("Mean over completed seeds at each arm's best LR; the band is the 95% t-interval over seeds. "
               f"Steps are averaged into buckets so a curve has at most 300 points.{smoothing}")
    return Plot("curves", "Loss curves by arm", caption, sql, fig)
