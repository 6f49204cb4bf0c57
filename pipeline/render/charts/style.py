"""What every chart shares: the bound colours and markers, figure size, titles, axes, and the
PNG encoding. Figures are matplotlib `Figure` objects on the Agg canvas, never pyplot state;
they show themselves in a notebook (ChartFigure), and are built and drawn in their language's
fonts (in_chart_fonts)."""

from __future__ import annotations

import contextlib
import functools
import io

import numpy as np
from matplotlib import rc_context, rcParams
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from PIL import Image

from pipeline.render import format as fmt
from pipeline.render.charts.fonts import chart_rc
from pipeline.render.charts.labels import chart_text

# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies); the marker
# shape repeats the bound so the charts also read in greyscale.
BOUND_COLORS: dict[str, str] = {"compute": "#0072B2", "memory": "#E69F00", "network": "#CC79A7"}
BOUND_MARKERS: dict[str, str] = {"compute": "o", "memory": "s", "network": "^"}
SERIES_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
SERIES_STYLES = ("-", "--", ":")
ROOF_COLOR = "#333333"
FIGSIZE = (8.0, 5.5)  # inches; at DPI 150: 1200 x 825 pixels
DPI = 150


class ChartFigure(Figure):
    """A matplotlib Figure that Jupyter shows inline as the PNG a run writes. Without pyplot
    no backend registers a display for a Figure, so a notebook would print `<Figure ...>`."""

    def _repr_png_(self) -> tuple[bytes, dict[str, int]]:
        # shown at 100 pixels an inch, the size of a notebook's usual figures; the 150-dpi
        # pixels keep it sharp on a high-density screen
        width = round(self.get_figwidth() * 100)
        return png_bytes(self), {"width": width}


class _Renderer(RendererAgg):
    """The Agg renderer, its text measures kept for the process: measuring a text lays it out
    in FreeType (about a millisecond), and matplotlib keeps a measure for one renderer only,
    while every chart measures the same tick labels, and each text of a chart is measured
    when the chart is built (label placement, fitted legends) and again when it is drawn on
    the canvas png_bytes makes. A measure depends on the text, its font properties, the dpi
    and the hinting settings, all in its key; the pixels drawn are the same."""

    measures: dict = {}

    def get_text_width_height_descent(self, s, prop, ismath):
        if ismath:  # mathtext and TeX as matplotlib has them (chart_text never makes them)
            return super().get_text_width_height_descent(s, prop, ismath)
        key = (s, prop, self.dpi, rcParams["text.hinting"], rcParams["text.hinting_factor"])
        measure = self.measures.get(key)
        if measure is None:
            if len(self.measures) > 20_000:  # a notebook drawing for days stays bounded
                self.measures.clear()
            measure = super().get_text_width_height_descent(s, prop, ismath)
            self.measures[(s, prop.copy(), *key[2:])] = measure  # the key's own copy
        return measure


class _Canvas(FigureCanvasAgg):
    """The Agg canvas on a _Renderer."""

    def get_renderer(self):
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key:
            self.renderer = _Renderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer


def in_chart_fonts(build):
    """A figure builder run in the current language's fonts (fonts.chart_rc: Korean adds a
    Hangul fallback): every text it makes keeps them, and png_bytes draws with them too.
    English builds as it always has, with no rcParams touched."""

    @functools.wraps(build)
    def built(*args, **kwargs):
        rc = chart_rc()
        if not rc:
            return build(*args, **kwargs)
        with rc_context(rc):
            fig = build(*args, **kwargs)
        fig.chart_rc = rc
        return fig

    return built


def new_figure(height: float = FIGSIZE[1]) -> ChartFigure:
    """A chart-sized Figure on the Agg canvas."""
    fig = ChartFigure(figsize=(FIGSIZE[0], height), dpi=DPI)
    _Canvas(fig)
    return fig


def png_bytes(fig: Figure) -> bytes:
    """The figure as a 256-colour PNG: about a quarter of the bytes of full colour, with no
    visible change on flat chart colours, so reports with many charts stay small enough to
    mail. No date or software metadata: the same chart gives the same bytes."""
    rc = getattr(fig, "chart_rc", None)  # in_chart_fonts': the fonts it was built with
    with rc_context(rc) if rc else contextlib.nullcontext():
        canvas = _Canvas(fig)
        canvas.draw()
    image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba())
    palette = image.convert("RGB").quantize(
        colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
    )
    out = io.BytesIO()
    palette.save(out, format="PNG", dpi=(DPI, DPI))
    return out.getvalue()


def titles(fig: Figure, title: str, subtitle: str, height: float = FIGSIZE[1]) -> None:
    fig.text(0.02, 1 - 0.19 / height, title, fontsize=12.5, fontweight="bold", va="top")
    if subtitle:
        fig.text(
            0.02, 1 - 0.46 / height, chart_text(subtitle, 140), fontsize=9, va="top", color="#444"
        )


def flops_axis(ax, axis: str) -> None:
    """FLOP/s tick labels (`197 TFLOP/s`) on the x or y axis."""
    formatter = FuncFormatter(lambda v, _: fmt.flop_rate(v, trim=True) if v > 0 else "0")
    getattr(ax, f"{axis}axis").set_major_formatter(formatter)


def log_log_axes(ax, xlim, ylim, *, minor_grid: bool = False) -> None:
    """Log-log axes with these limits: ticks every decade (x with the one tick formatter, y
    in FLOP/s), minor ticks at 2 and 5 only (each tick is a costly artist: 8 per decade over
    ten decades made tick drawing most of a chart's render time), a light grid below."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, numticks=12))
        axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0), numticks=12))
        axis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt.tick(v)))
    flops_axis(ax, "y")
    ax.grid(True, which="major", color="#e3e3e3", lw=0.6)
    if minor_grid:
        ax.grid(True, which="minor", color="#f0f0f0", lw=0.4)
    ax.set_axisbelow(True)


def log_limits(values: np.ndarray, pad: float, min_decades: float) -> tuple[float, float]:
    lo, hi = np.log10(values.min()) - np.log10(pad), np.log10(values.max()) + np.log10(pad)
    if hi - lo < min_decades:
        mid = (hi + lo) / 2
        lo, hi = mid - min_decades / 2, mid + min_decades / 2
    return 10**lo, 10**hi


def axis_points(ax, x: np.ndarray, y: np.ndarray, step: float = 6.0) -> np.ndarray:
    """Display coordinates of a polyline, sampled every `step` pixels (label obstacles)."""
    pts = ax.transData.transform(np.column_stack([x, y]))
    out = [pts[:1]]
    for a, b in zip(pts[:-1], pts[1:], strict=True):
        n = max(int(np.hypot(*(b - a)) // step), 1)
        t = np.linspace(0, 1, n + 1)[1:, None]
        out.append(a + (b - a) * t)
    return np.concatenate(out)


def hollow(ax, x: np.ndarray, y: np.ndarray, color: str, width: float, **kw) -> None:
    """Unfilled markers: the scenarios that do not fit in HBM (the same on every chart)."""
    ax.scatter(x, y, facecolors="none", edgecolors=color, linewidths=width, **kw)


def rgb(color: str) -> tuple[float, float, float]:
    return tuple(int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))


def short_seconds(value: float) -> str:
    """A tick's time as the repo writes it, without trailing zeros: '50 ms', '14.8 ms'."""
    number, _, unit = fmt.seconds(value).partition(" ")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return f"{number} {unit}"


def log_time_axis(ax, low: float, high: float, seconds=fmt.seconds) -> None:
    """A log y axis of times from `low` to `high` (seconds), padded, labelled with `seconds`
    (`3.4 ms`), at 2 and 5 too when it spans little: the fleet and model charts' time axis."""
    lo, hi = np.log10(low) - 0.08, np.log10(high) + 0.08
    if hi - lo < 1.0:
        mid = (hi + lo) / 2
        lo, hi = mid - 0.5, mid + 0.5
    ax.set_yscale("log")
    ax.set_ylim(10**lo, 10**hi)
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=12))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0), numticks=12))
    shown = FuncFormatter(lambda v, _: seconds(v))
    ax.yaxis.set_major_formatter(shown)
    ax.yaxis.set_minor_formatter(shown if hi - lo < 2.5 else NullFormatter())
    ax.tick_params(axis="y", which="minor", labelsize=8, labelcolor="#555")


def marker_handles(bounds, unfit: bool, bound_label, unfit_label: str) -> list:
    """Legend entries for the marker shapes of `bounds` (`bound_label(bound)` their text)
    and, when some point does not fit in HBM, for a hollow one (`unfit_label`)."""
    handles = [Line2D([], [], ls="", marker=BOUND_MARKERS[b], color="#555", ms=6,
                      label=bound_label(b)) for b in bounds]  # fmt: skip
    if unfit:
        handles.append(Line2D([], [], ls="", marker="o", mfc="white", mec="#555", ms=6,
                              label=unfit_label))  # fmt: skip
    return handles
