"""Does the proxy decide right? Each rung's decision accuracy against its share of the reference's compute, with
its interval and the target; below, each decision as a row, its pick at every rung against the reference's order
(`analysis.ladder.decisions`), so that where it flips is where its row changes colour."""

from __future__ import annotations

import seaborn as sns
from matplotlib.ticker import NullLocator

from analysis.ladder.decision_verdicts import ORDER
from analysis.plots.base import Context, Plot, legend, panels, shown

CAPTION = ("Top: the share of the decisions the largest rung makes (an order: better, worse, more or less stable) "
           "that each smaller rung's pick makes the same way, with its 95% interval (the share whose true order at the "
           "rung agrees, from the rung's seeds), against the rung's training compute as a share of the largest rung's; "
           "dashed: the target. Bottom: each decision's pick at each rung: the reference's order, the opposite, or "
           "none; a filled square where that rung resolves it itself. Decisions the reference does not order are "
           "listed, counted apart.")
PALETTE = sns.color_palette("colorblind")
COLORS = {1: PALETTE[2], -1: PALETTE[3], 0: (0.6, 0.6, 0.6)}
NAMES = {1: "the reference's order", -1: "the opposite", 0: "no pick"}


def figure(ctx: Context) -> Plot:
    """The sweep's own decisions (every pair of its arms); `harness plot decisions` pools several sweeps."""
    from analysis.ladder.decision_runs import sweep_runs
    from analysis.ladder.decisions import decision_accuracy

    return draw(decision_accuracy(sweep_runs(ctx.sweep, ctx.metric, ctx.baseline)))


def _accuracy(ax, result) -> None:
    rungs = result.rungs.dropna(subset=["accuracy"])
    below, above = rungs["accuracy"] - rungs["low"], rungs["high"] - rungs["accuracy"]
    ax.errorbar(rungs["compute_share"], rungs["accuracy"], yerr=[below, above], fmt="o", color=PALETTE[0], capsize=3,
                label="decision accuracy (95%)")
    ax.axhline(result.target, color="0.3", linestyle="--", linewidth=1, label=f"target {result.target:g}")
    ax.set(xscale="log", ylim=(-0.05, 1.05), xlabel="compute, share of the reference's (one tick a rung)",
           ylabel="decision accuracy")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.margins(x=0.15)
    ax.set_xticks(rungs["compute_share"].tolist(), [f"{share:.3g}" for share in rungs["compute_share"]])


def _grid(ax, result) -> list[str]:
    """The picks, one row per decision (the counted-apart ones last, without marks); returns the row labels."""
    data, decisions = result.data, result.decisions
    scored = decisions[decisions["reference"] == "decided"]
    apart = decisions[decisions["reference"] != "decided"]
    columns = data.rungs
    for y, d in enumerate(scored.itertuples()):
        ax.scatter(len(columns) - 1, y, marker="s", s=140, color=COLORS[1], edgecolors="0.2")
        mine = result.picks[(result.picks["sweep"] == d.sweep) & (result.picks["first"] == d.first)
                            & (result.picks["second"] == d.second)]
        for p in mine[mine["rung"].isin(columns[:-1])].itertuples():
            mark = 0 if p.pick == 0 else 1 if p.agrees else -1
            resolved = p.verdict in ORDER
            ax.scatter(columns.index(p.rung), y, marker="s", s=140, color=COLORS[mark], alpha=1.0 if resolved else 0.45,
                       edgecolors="0.2" if resolved else "none")
    for mark, name in NAMES.items():
        ax.scatter([], [], marker="s", s=60, color=COLORS[mark], label=name)
    labels = [shown(f"{_name(result, d)} → {d.winner}") for d in scored.itertuples()]
    labels += [shown(f"{_name(result, d)} ({d.verdict or d.reference} at the reference)") for d in apart.itertuples()]
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xticks(range(len(columns)), [shown(rung.replace(",", "\n")) for rung in columns[:-1]] + ["reference"])
    ax.set(xlim=(-0.5, len(columns) - 0.5), ylim=(len(labels) - 0.5, -0.5), xlabel="rung")
    return labels


def _name(result, d) -> str:
    """A decision's row label: the sweep's name before it when several sweeps are pooled."""
    return d.decision if len(result.data.variants) == 1 else f"{d.sweep}: {d.decision}"


def draw(result) -> Plot:
    """The figure of a `DecisionAccuracy`."""
    names = [f"{_name(result, d)} ({d.verdict or d.reference} at the reference)" for d in result.decisions.itertuples()]
    fig, (top, bottom) = panels(2, ncols=1, label_chars=max((len(n) for n in names), default=10),
                                legend_chars=len(NAMES[1]))
    _accuracy(top, result)
    _grid(bottom, result)
    legend(fig, [top, bottom])
    return Plot("decisions", "Does the proxy decide right?", CAPTION, result.data.sql, fig)
