"""Output-logit growth: max |logit| and mean log Z against step, by arm at its largest LR (log scale)."""

from __future__ import annotations

from analysis.plots.bands import describe
from analysis.plots.base import Context, Plot, at_lr, draw_bands, legend, no_data, panels, seed_band
from analysis.reading.frames import curves as curve_frame

SERIES = (("output_logit_max_abs", "max |output logit|", "log"), ("output_log_z_mean", "mean log Z", "linear"))
CAPTION = ("Output-logit signals on the fixed probe batch, mean over finished seeds at each arm's largest LR; growing "
           f"log Z is what z-loss counters (Chowdhery et al. 2022, Wortsman et al. 2023). {describe(log=True)}")


def series(ctx: Context):
    """Each series' per-run curves of finished runs at every LR, and the SQL."""
    frames, sql = {}, []
    for name, _, _ in SERIES:
        frames[name], text = curve_frame(ctx.sweep, name, statuses=("completed", "diverged"))
        sql.append(text)
    return frames, sql


def figure(ctx: Context) -> Plot:
    frames, sql = series(ctx)
    fig, axes = panels(len(SERIES), legend_chars=ctx.name_chars)
    for ax, (name, label, scale) in zip(axes, SERIES):
        frame = at_lr(frames[name], ctx.top_lr)
        if frame.empty:
            no_data(ax, label)
            continue
        draw_bands(ax, seed_band(frame, ["arm", "step"], log=scale == "log"), ctx)
        ax.set(yscale=scale, xlabel="step", ylabel=label, title=label)
    legend(fig, axes)
    return Plot("logits", "Output-logit growth", CAPTION, sql, fig)
