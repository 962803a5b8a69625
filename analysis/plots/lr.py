"""Final loss against learning rate by arm (Wortsman et al. 2023, Fig. 1 style), faceted by scale."""

from __future__ import annotations

from analysis.plots.base import Context, Plot, legend, no_data, panels
from analysis.scale import scale_axis
from analysis.sensitivity import lr_curve


def figure(ctx: Context) -> Plot:
    """ℓ(η) per arm (diverged runs count as the loss at initialization); crosses mark LRs with divergences."""
    curve, sql = lr_curve(ctx.sweep, ctx.metric)
    axis = scale_axis(ctx.sweep)
    scales = ctx.sweep.finished.groupby("arm")[axis].agg(lambda v: v.iloc[0] if v.nunique() == 1 else None) if axis else None
    facets = sorted(scales.dropna().unique()) if scales is not None and scales.notna().all() else [None]
    fig, axes = panels(len(facets))
    for ax, facet in zip(axes, facets):
        rows = curve if facet is None else curve[curve["arm"].map(scales) == facet]
        if rows["lr"].isna().all():
            no_data(ax, "learning rate")
            continue
        for arm, points in rows.groupby("arm"):
            points = points.sort_values("lr")
            ax.plot(points["lr"], points["loss"], marker="o", color=ctx.colors[arm], label=arm)
            hit = points[points["diverged"] > 0]
            ax.scatter(hit["lr"], hit["loss"], marker="x", s=80, color=ctx.colors[arm], zorder=3)
        ax.set(xscale="log", xlabel="learning rate", ylabel=ctx.metric, title=f"{axis}={facet:g}" if facet is not None else None)
    legend(fig, axes)
    caption = (f"Mean {ctx.metric} over each arm's finished seeds at each LR; a diverged run counts as the loss "
               "at initialization ℓ₀ (first training loss), and an × marks an LR where some seed diverged.")
    return Plot("lr", "Loss against learning rate", caption, sql, fig)
