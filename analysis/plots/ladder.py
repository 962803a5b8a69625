"""Loss against training compute per arm of a ladder: each seed a point, each fitted curve L = E + A·C^-α
drawn out to the target with its bootstrap band, the target marked (`analysis.ladder`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis.plots.base import Context, Plot, arm_colors, legend, panels, shown

if TYPE_CHECKING:
    from analysis.ladder.analyse import LadderAnalysis

CAPTION = ("Each point is a run at its rung's best LR (diverged runs are left out and counted in the tables). Each "
           "line is the arm's fitted curve L = E + A·C^-α (Huber loss in log space), drawn from its first rung to the "
           "target (dotted line); the band is the 95% interval of the curve over a seed bootstrap, widened for the few "
           "seeds it rests on. An arm whose fit did not converge, or has fewer than three rungs, is drawn as points "
           "only.")


def ladder_of(ctx: Context) -> LadderAnalysis:
    """The context's ladder, its fit on the axis of the target asked for (compute unless --target-params); the
    fitting code is imported here, for a ladder figure only."""
    from analysis.ladder.analyse import analyse_ladder

    return analyse_ladder(ctx.sweep, ctx.metric, ctx.baseline, ctx.target_flops, ctx.target_params, axes=())


def figure(ctx: Context) -> Plot:
    """Loss against the target's axis per arm: runs as points, fitted curves with bands, the target marked."""
    from analysis.ladder.extrapolate import AXIS_UNITS, drawn

    ladder = ladder_of(ctx)
    lines = drawn(ladder.fit, ladder.target)
    colors = arm_colors(ladder.data.variants, ladder.data.variants[0])
    fig, (ax,) = panels(1, legend_chars=max(len(line.label) for line in lines))
    for variant, line in zip(ladder.data.variants, lines):
        color = colors[variant]
        refused = line.note.startswith("no extrapolation")
        ax.scatter(line.x, line.loss, s=14, color=color, alpha=0.6,
                   label=shown(line.label) + (" (no extrapolation)" if refused else ""))
        if line.curve is not None:
            grid, fitted, low, high = line.curve
            ax.plot(grid, fitted, color=color, linewidth=1.5)
            ax.fill_between(grid, low, high, color=color, alpha=0.15, linewidth=0)
    ax.axvline(ladder.target.value, color="0.3", linestyle=":", linewidth=1)
    ax.annotate("target", (ladder.target.value, 1), xycoords=("data", "axes fraction"), ha="right", va="top",
                color="0.3", xytext=(-3, -3), textcoords="offset points")
    unit = AXIS_UNITS[ladder.target.axis][0]
    ax.set(xscale="log", xlabel=f"training {unit}" if unit == "FLOPs" else unit, ylabel=ctx.metric)
    legend(fig, [ax])
    notes = tuple(f"{line.label}: {line.note}" for line in lines if line.note.startswith("no extrapolation"))
    return Plot("ladder", "Loss against compute, fitted and extrapolated", CAPTION, ladder.sql, fig, notes)
