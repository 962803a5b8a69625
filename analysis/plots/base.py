"""What every figure shares: one colour per arm (the same in every figure), the figure record, the axes.

Figures are `matplotlib.figure.Figure` objects drawn with seaborn on the Agg canvas: no pyplot state, no
display needed.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Iterable

import matplotlib

matplotlib.use("Agg")  # before anything imports pyplot (seaborn does): never ask for a display

import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.backends.backend_agg import RendererAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.font_manager import FontProperties  # noqa: E402

from analysis.plots.bands import seed_band  # noqa: E402,F401  (the figures' band rule, imported with the rest from here)
from analysis.reading.frames import Sweep  # noqa: E402

STYLE = "whitegrid"
PANEL = (4.2, 3.4)  # inches per panel, its labels included
MARGIN = (1.0, 1.0)  # inches: left of the first column (y labels), above and below all rows (title, x labels)
GAP = 1.1  # inches between panels of a row (the next panel's y labels)
FEW_POINTS = 20  # a curve with fewer points gets markers (validation every few hundred steps, probes)
LEGEND_WIDTH = 1.9  # inches right of the panels, at least
CHAR_WIDTH = 0.09  # inches per character of a label at the default font size
DPI = 100


@dataclass
class Context:
    """The choices every figure of one report shares."""

    sweep: Sweep
    metric: str
    baseline: str
    best_lr: dict[str, float]  # arm → its best LR (curves are drawn there)
    ema: float | None = None  # smoothing of training curves: weight of the past, 0 <= ema < 1 (0 or None: none)
    log: bool = False  # log axes for loss curves
    target_flops: float | None = None  # the ladder figure's target (None: its default)
    target_params: float | None = None  # or, instead, a target size (the ladder figure is then against parameters)
    colors: dict[str, tuple] = field(init=False)

    def __post_init__(self) -> None:
        self.colors = arm_colors(self.sweep.arms, self.baseline)

    def label(self, arm: str) -> str:
        """The arm as legends and tick labels show it: its display label, else its name (as matplotlib text)."""
        return shown(self.sweep.shown(arm))

    @property
    def name_chars(self) -> int:
        """The widest arm label as drawn, in `CHAR_WIDTH` units (legends and tick labels are sized to it)."""
        return measured_chars(self.label(arm) for arm in self.colors)

    @property
    def top_lr(self) -> dict[str, float]:
        """arm → the largest LR it ran (where instability shows first)."""
        return self.sweep.finished.groupby("arm")["lr"].max().to_dict()


@dataclass
class Plot:
    """A drawn figure with the SQL that produced its data."""

    name: str
    title: str
    caption: str
    sql: list[str]
    figure: Figure
    notes: tuple[str, ...] = ()  # one line each that `harness plot` prints (e.g. an arm's "no extrapolation: …")

    def save(self, out, format: str | None = None) -> None:
        """Write to a path (the format follows its suffix: png, svg, pdf) or to a binary file in `format`."""
        self.figure.savefig(out, format=format, dpi=DPI)

    def png(self) -> bytes:
        sink = io.BytesIO()
        self.save(sink, "png")
        return sink.getvalue()


def make_context(sweep: Sweep, metric: str, baseline: str | None = None, **options) -> Context:
    """The context for `sweep`'s figures, each arm drawn at its best LR; AnalysisError for an unknown metric or
    baseline, or a sweep with no finished run. `options`: ema, log, target_flops, target_params."""
    from analysis.reading.finished import check_finished, check_metric, resolve_baseline
    from analysis.signals.sensitivity import lr_sensitivity

    check_metric(sweep, metric)
    check_finished(sweep)
    sensitivity, _ = lr_sensitivity(sweep, metric)
    best_lr = dict(zip(sensitivity["arm"], sensitivity["best_lr"]))
    return Context(sweep, metric, resolve_baseline(sweep, baseline), best_lr, **options)


def shown(name: str) -> str:
    """A user string as matplotlib text: a `$` would start mathtext (and a bad formula fails the figure)."""
    return name.replace("$", r"\$")


def measured_chars(labels: Iterable[str]) -> int:
    """The widest of `labels` as the figures draw it (measured by the Agg renderer in their font and size), in
    `CHAR_WIDTH` units, the unit `panels` sizes margins in: a label of wide letters gets the room it takes, which its
    length alone would underestimate and clip."""
    with sns.axes_style(STYLE):
        font = FontProperties(size=matplotlib.rcParams["ytick.labelsize"])
        renderer = RendererAgg(1, 1, DPI)
        widths = (renderer.get_text_width_height_descent(label, font, ismath=False)[0] for label in labels)
        widest = max(widths, default=0.0)
    return math.ceil(widest / DPI / CHAR_WIDTH)


def arm_colors(arms: list[str], baseline: str) -> dict[str, tuple]:
    """The baseline gets the first colour, the other arms the next ones in name order."""
    ordered = [baseline] + [arm for arm in sorted(arms) if arm != baseline]
    palette = sns.color_palette("colorblind" if len(ordered) <= 10 else "husl", len(ordered))
    return dict(zip(ordered, palette))


def panels(n: int = 1, ncols: int | None = None, label_chars: int = 0, legend_chars: int = 0) -> tuple[Figure, list]:
    """A figure with `n` seaborn-styled axes, `ncols` per row (default all in one row), and room on the right for
    a legend of labels `legend_chars` long. Margins are fixed in inches (matplotlib's constrained layout
    doubled the drawing time); `label_chars` widens the left margin for y tick labels that long (arm names)."""
    ncols = ncols or n
    nrows = -(-n // ncols)
    left = max(MARGIN[0], 0.2 + CHAR_WIDTH * label_chars)
    right = max(LEGEND_WIDTH, 1.0 + CHAR_WIDTH * legend_chars)  # the line sample and gaps, then the text
    width, height = left + PANEL[0] * ncols + right, MARGIN[1] + PANEL[1] * nrows
    with sns.axes_style(STYLE):
        figure = Figure(figsize=(width, height))
        axes = figure.subplots(nrows, ncols, squeeze=False).ravel().tolist()
    figure.subplots_adjust(left=left / width, right=1 - right / width, bottom=0.6 / height, top=1 - 0.4 / height,
                           wspace=GAP / (PANEL[0] - GAP), hspace=0.9 / (PANEL[1] - 0.9))
    for extra in axes[n:]:
        extra.set_visible(False)
    return figure, axes[:n]


def at_lr(frame: pd.DataFrame, chosen: dict[str, float]) -> pd.DataFrame:
    """Rows of each arm at its chosen LR (all rows when the arm's LR is unknown, e.g. NULL)."""
    wanted = frame["arm"].map(chosen)
    return frame[wanted.isna() | (frame["lr"] == wanted) | (frame["lr"].isna() & wanted.isna())]


def draw_bands(ax, band: pd.DataFrame, ctx: Context, x: str = "step") -> None:
    """One line per arm with its seed band, in the arm's colour."""
    for arm, rows in band.groupby("arm"):
        rows = rows.sort_values(x)
        ax.plot(rows[x], rows["mean"], color=ctx.colors[arm], label=ctx.label(arm), linewidth=1.5,
                marker="o" if len(rows) < FEW_POINTS else None)
        ax.fill_between(rows[x], rows["low"], rows["high"], color=ctx.colors[arm], alpha=0.2, linewidth=0)


def legend(figure: Figure, axes) -> None:
    """One legend for the figure, right of the panels, with every labelled artist of any panel once."""
    entries: dict[str, Artist] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if entries:
        figure.legend(list(entries.values()), list(entries), loc="upper left", frameon=False,
                      bbox_to_anchor=(figure.subplotpars.right + 0.01, figure.subplotpars.top))


def no_data(ax, what: str) -> None:
    """Say on the axes that there is nothing to draw (a sweep without probes, say), rather than leave it blank."""
    ax.text(0.5, 0.5, f"no {what} logged", ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])
