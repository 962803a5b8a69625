"""Validation loss against training FLOPs and against wall time, by arm at its best LR."""

from __future__ import annotations

from analysis.plots.base import FEW_POINTS, Context, Plot, at_lr, legend, no_data, panels

AXES = (("flops", "training FLOPs", "log"), ("wall_seconds", "wall time (s, training steps only)", "linear"))
CAPTION = ("Mean over completed seeds at each arm's best LR. FLOPs = tokens seen × the arm's training FLOPs per "
           "token; wall time adds each logged step's time over the steps since the previous log.")


def points(ctx: Context):
    """Per completed run and validation step: val_loss, training FLOPs so far and wall seconds so far; the SQL."""
    return ctx.sweep.frame("""
        SELECT r.arm, r.lr, r.seed, r.run_id, v.step, v.value AS val_loss, t.value * r.flops_per_token AS flops,
            w.wall_seconds
        FROM sweep_runs r
        JOIN metrics v ON v.run_id = r.run_id AND v.name = 'val_loss'
        JOIN metrics t ON t.run_id = v.run_id AND t.step = v.step AND t.name = 'tokens'
        JOIN (SELECT run_id, step, sum(value * gap) OVER (PARTITION BY run_id ORDER BY step) AS wall_seconds
              FROM (SELECT run_id, step, value, step - lag(step, 1, -1) OVER (PARTITION BY run_id ORDER BY step) AS gap
                    FROM metrics WHERE name = 'step_time')) w ON w.run_id = v.run_id AND w.step = v.step
        WHERE r.status = 'completed' AND isfinite(v.value)
    """)


def figure(ctx: Context) -> Plot:
    frame, sql = points(ctx)
    frame = at_lr(frame, ctx.best_lr)
    fig, axes = panels(len(AXES), legend_chars=ctx.name_chars)
    for ax, (column, label, scale) in zip(axes, AXES):
        found = frame[frame[column] > 0] if scale == "log" else frame
        if found.empty:
            no_data(ax, label)
            continue
        mean = found.groupby(["arm", "step"])[["val_loss", column]].mean().reset_index()
        for arm, rows in mean.groupby("arm"):
            ax.plot(rows[column], rows["val_loss"], color=ctx.colors[arm], label=ctx.label(arm), linewidth=1.5,
                    marker="o" if len(rows) < FEW_POINTS else None)
        ax.set(xscale=scale, xlabel=label, ylabel="validation loss")
    legend(fig, axes)
    return Plot("compute", "Loss against compute and wall time", CAPTION, [sql], fig)
