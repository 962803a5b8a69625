"""Parameters and training FLOPs per token of each arm (what an arm costs, next to what it buys)."""

from __future__ import annotations

from matplotlib.ticker import EngFormatter

from analysis.plots.base import Context, Plot, panels, shown

SERIES = (("params", "parameters"), ("flops_per_token", "training FLOPs per token"))


def figure(ctx: Context) -> Plot:
    frame, sql = ctx.sweep.frame("""
        SELECT arm, max(params) AS params, max(flops_per_token) AS flops_per_token
        FROM sweep_runs GROUP BY arm ORDER BY arm
    """)
    frame = frame.set_index("arm").reindex(list(ctx.colors)).reset_index()
    fig, axes = panels(len(SERIES), label_chars=ctx.name_chars)
    for ax, (column, label) in zip(axes, SERIES):
        ax.barh([shown(arm) for arm in frame["arm"]], frame[column].fillna(0), color=[ctx.colors[a] for a in frame["arm"]])
        ax.invert_yaxis()
        ax.xaxis.set_major_formatter(EngFormatter())
        ax.set(xlabel=label, title=label)
    caption = "As recorded when each run opened (analytic counts from harness.calc); an arm without them shows 0."
    return Plot("cost", "Parameters and FLOPs per arm", caption, [sql], fig)
