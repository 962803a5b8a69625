"""Final loss against learning rate by arm (Wortsman et al. 2023, Fig. 1 style), a panel per facet value."""

from __future__ import annotations

from analysis.plots.bands import describe, seed_band
from analysis.plots.base import Context, Plot, legend, no_data, panels, shown
from analysis.plots.facets import arm_values, facet_switch
from analysis.signals.sensitivity import run_losses


def points(ctx: Context):
    """Per (arm, lr): mean ℓ over seeds with its band (mean, n, low, high) and diverged runs; the runs frame
    (`analysis.signals.sensitivity.run_losses`); the SQL."""
    runs, sql = run_losses(ctx.sweep, ctx.metric)
    band = seed_band(runs, ["arm", "lr"], "loss")
    diverged = runs.groupby(["arm", "lr"], dropna=False)["diverged"].sum().rename("diverged").reset_index()
    return band.merge(diverged, on=["arm", "lr"], how="left"), runs, sql


def figure(ctx: Context) -> Plot:
    """ℓ(η) per arm with a seed band as error bars (diverged runs count as the loss at initialization);
    crosses mark LRs with divergences."""
    curve, _, sql = points(ctx)
    switch = facet_switch(ctx.sweep)
    values = arm_values(ctx.sweep, switch) if switch else None
    facets = sorted(values.unique()) if values is not None else [None]
    fig, axes = panels(len(facets), legend_chars=ctx.name_chars)
    for ax, facet in zip(axes, facets):
        rows = curve if facet is None else curve[curve["arm"].map(values) == facet]
        if rows["lr"].isna().all():
            no_data(ax, "learning rate")
            continue
        for arm, found in rows.groupby("arm"):
            found = found.sort_values("lr")
            ax.errorbar(found["lr"], found["mean"], yerr=[found["mean"] - found["low"], found["high"] - found["mean"]],
                        marker="o", capsize=3, color=ctx.colors[arm], label=ctx.label(arm))
            hit = found[found["diverged"] > 0]
            ax.scatter(hit["lr"], hit["mean"], marker="x", s=80, color=ctx.colors[arm], zorder=3)
        ax.set(xscale="log", xlabel="learning rate", ylabel=ctx.metric,
               title=shown(f"{switch}={facet}") if facet is not None else None)
    legend(fig, axes)
    caption = (f"Mean {ctx.metric} over each arm's finished seeds at each LR; a diverged run counts as the loss "
               f"at initialization ℓ₀ (the loss at step 0), and an × marks an LR where some seed diverged. "
               f"{describe('Each error bar')} One panel per value of the scale axis, or of the grid's second switch "
               "when the grid is a product over it.")
    return Plot("lr", "Loss against learning rate", caption, sql, fig)
