"""Spike timeline: every loss and grad-norm spike and every divergence, one row per arm, seeds side by side."""

from __future__ import annotations

from analysis.plots.base import Context, Plot, legend, no_data, panels

MARKERS = {"loss_spike": ("o", "loss spike"), "grad_norm_spike": ("^", "grad-norm spike"),
           "diverged": ("X", "diverged")}
CAPTION = "Each marker is one event of one run (all LRs); within an arm's row, seeds are spread vertically."


def events(ctx: Context):
    """Every spike and divergence event of the sweep's runs (arm, lr, seed, run_id, step, kind), and the SQL."""
    kinds = ", ".join(f"'{kind}'" for kind in MARKERS)
    return ctx.sweep.frame(f"""
        SELECT r.arm, r.lr, r.seed, e.run_id, e.step, e.kind
        FROM events e JOIN sweep_runs r USING (run_id)
        WHERE e.kind IN ({kinds}) ORDER BY r.arm, e.step
    """)


def figure(ctx: Context) -> Plot:
    frame, sql = events(ctx)
    arms = list(ctx.colors)
    fig, (ax,) = panels(1, label_chars=ctx.name_chars, legend_chars=max(len(label) for _, label in MARKERS.values()))
    if frame.empty:
        no_data(ax, "spikes or divergences")
    else:
        seeds = sorted(frame["seed"].dropna().unique())
        jitter = {seed: 0.6 * (i / max(1, len(seeds) - 1) - 0.5) for i, seed in enumerate(seeds)}
        y = frame["arm"].map(arms.index) + frame["seed"].map(jitter).fillna(0)
        for kind, (marker, label) in MARKERS.items():
            rows = frame["kind"] == kind
            style = {"marker": marker, "edgecolors": "black" if kind == "diverged" else "none",
                     "s": 60 if kind == "diverged" else 25}
            ax.scatter(frame.loc[rows, "step"], y[rows], c=[ctx.colors[a] for a in frame.loc[rows, "arm"]], **style)
            ax.scatter([], [], color="0.35", label=label, **style)  # the legend's marker, in no arm's colour
        ax.set_yticks(range(len(arms)), [ctx.label(arm) for arm in arms])
        ax.set(xlabel="step", ylim=(len(arms) - 0.3, -0.7))  # the baseline on top
        legend(fig, [ax])
    return Plot("spikes", "Spike and divergence timeline", CAPTION, [sql], fig)
