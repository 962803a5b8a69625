"""Max attention logit against step, one panel per layer, by arm at its largest LR (log scale).

Attention-logit growth is the instability Wortsman et al. (2023) and Dehghani et al. (2023) saw first; it
shows at high LR, so each arm is drawn at the largest LR it ran.
"""

from __future__ import annotations

from analysis.plots.bands import describe
from analysis.plots.base import Context, Plot, at_lr, draw_bands, legend, no_data, panels, seed_band

MAX_PANELS = 8
CAPTION = ("Max over heads of the exact pre-softmax attention logit at each probe step, geometric mean over finished "
           f"seeds (diverged runs included up to their divergence) at each arm's largest LR. {describe(log=True)}")


def frame(ctx: Context):
    """Per run and layer, the max attention logit per step bucket of finished runs at every LR, and the SQL."""
    stride = ctx.sweep.stride()
    return ctx.sweep.frame(f"""
        SELECT r.arm, r.lr, r.seed, l.run_id, l.layer, l.step // {stride} * {stride} AS step, max(l.value) AS value
        FROM layer_metrics l JOIN sweep_runs r USING (run_id)
        WHERE l.name = 'attn_logit_max' AND isfinite(l.value) AND r.status IN ('completed', 'diverged')
        GROUP BY ALL
    """)


def figure(ctx: Context) -> Plot:
    found, sql = frame(ctx)
    found = at_lr(found, ctx.top_lr)
    layers = sorted(found["layer"].unique())[:MAX_PANELS] or [None]
    fig, axes = panels(len(layers), ncols=min(4, len(layers)), legend_chars=ctx.name_chars)
    for ax, layer in zip(axes, layers):
        if layer is None:
            no_data(ax, "attention logits")
            continue
        draw_bands(ax, seed_band(found[found["layer"] == layer], ["arm", "step"], log=True), ctx)
        ax.set(yscale="log", xlabel="step", ylabel="max attention logit", title=f"layer {layer}")
    legend(fig, axes)
    return Plot("attention", "Max attention logit by layer", CAPTION, [sql], fig)
