"""Parameters and training FLOPs per token of each arm (what an arm costs, next to what it buys)."""

from __future__ import annotations

from matplotlib.ticker import EngFormatter

from analysis.plots.base import Context, Plot, panels

SERIES = (("params", "parameters"), ("flops_per_token", "training FLOPs per token"))
CAPTION = "As recorded when each run opened (analytic counts from harness.calc); an arm without them shows 0."


def counts(ctx: Context):
    """Parameters and FLOPs per token of each arm, in the figures' arm order (baseline first), and the SQL."""
    frame, sql = ctx.sweep.frame("""
        SELECT arm, max(params) AS params, max(flops_per_token) AS flops_per_token
        FROM sweep_runs GROUP BY arm ORDER BY arm
    """)
    return frame.set_index("arm").reindex(list(ctx.colors)).reset_index(), sql


def figure(ctx: Context) -> Plot:
    frame, sql = counts(ctx)
    fig, axes = panels(len(SERIES), label_chars=ctx.name_chars)
    for ax, (column, label) in zip(axes, SERIES):
        ax.barh([ctx.label(arm) for arm in frame["arm"]], frame[column].fillna(0),
                color=[ctx.colors[a] for a in frame["arm"]])
        ax.invert_yaxis()
        ax.xaxis.set_major_formatter(EngFormatter())
        ax.set(xlabel=label, title=label)
    return Plot("cost", "Parameters and FLOPs per arm", CAPTION, [sql], fig)
