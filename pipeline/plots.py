"""Roofline charts (DESIGN §7; book: "All About Rooflines", its network roofline and Q3 figure).

Two layers:
- data preparation, pure and tested: `roofline_data`, `network_data`, `sweep_data` and
  `summary_data` turn the results frame into plain dicts of numbers and labels (roofs, ridges,
  points by bound, sweep lines), which is all a chart needs;
- rendering: `plot_roofline`, `plot_network`, `plot_sweep` and `plot_summary` draw one dict
  each with matplotlib's object API (a `Figure`, the Agg canvas, no pyplot, no rcParams) and
  write a PNG whose bytes depend only on the data.

`render_charts` plans every chart of a run, keeps the first `max_charts` in a fixed priority
order (summary, rooflines, network rooflines, sweeps) and renders them, in parallel processes
when there are enough of them.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
from PIL import Image as PILImage

from pipeline.children import init_worker
from pipeline.dtypes import PEAK_FAMILIES, peak_family
from pipeline.limits import DEFAULT_MAX_CHARTS
from pipeline.meta import Chart
from pipeline.plot_labels import chart_text, cluster_labels, place_labels

BOUNDS = ("compute", "memory", "network")
# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies); the marker
# shape repeats the bound so the charts also read in greyscale.
BOUND_COLORS: dict[str, str] = {"compute": "#0072B2", "memory": "#E69F00", "network": "#CC79A7"}
BOUND_MARKERS: dict[str, str] = {"compute": "o", "memory": "s", "network": "^"}
SERIES_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
SERIES_STYLES = ("-", "--", ":")
ROOF_COLOR = "#333333"

LABEL_LIMIT = 20  # at most this many labelled items (points + sweep series) get name labels
SCATTER_LIMIT = 5_000  # above this many points a chart shows binned density instead
SWEEP_LINES_PER_CHART = 10  # more lines than this go onto further pages of the same sweep
PARALLEL_MIN_CHARTS = 4  # fewer charts render faster in-process than with worker start-up
DENSITY_BINS = (160, 110)
FIGSIZE = (8.0, 5.5)  # inches; at DPI 150: 1200 x 825 pixels
DPI = 150
KIND_ORDER = ("summary", "roofline", "network", "sweep")
KIND_NAMES = {
    "summary": ("summary chart", "summary charts"),
    "roofline": ("roofline", "rooflines"),
    "network": ("network roofline", "network rooflines"),
    "sweep": ("sweep chart", "sweep charts"),
}


@dataclass
class ChartSet:
    """The charts a run rendered, how many the cap left out, and notices saying which."""

    charts: list[Chart] = field(default_factory=list)
    left_out: int = 0
    notices: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # render time per chart path


@dataclass
class _Spec:
    """A planned chart: what it is, its file stem, and how to build its data."""

    kind: str
    stem: str
    title: str
    hardware: str | None
    series: tuple[str, ...]
    build: Callable[[], dict]
    cost: int  # points drawn, to hand the biggest charts to workers first


# -- names and text ------------------------------------------------------------------------


def safe_stem(text: str, limit: int = 60) -> str:
    """A file-name part from untrusted text: only [a-z0-9._-], no '..', never empty."""
    ascii_text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    stem = re.sub(r"[^a-z0-9._-]+", "-", ascii_text.lower())
    stem = re.sub(r"\.{2,}", ".", stem).strip("-._")
    return stem[:limit].strip("-._") or "x"


def _unique(stem: str, taken: set[str]) -> str:
    name, n = stem, 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}"
    taken.add(name)
    return name


_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float, unit: str) -> str:
    """A number with an SI prefix and unit, three significant digits: 1.97e14 -> '197 TFLOP/s'."""
    if value == 0 or not np.isfinite(value):
        return f"{value:g} {unit}"
    value = float(f"{value:.3g}")  # round first: 999.7e12 is '1 PFLOP/s', not '1e+03 TFLOP/s'
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _intensity_label(value: float) -> str:
    if value >= 1e5:
        return f"{value:.0e}".replace("e+0", "e").replace("e+", "e")
    if value >= 1:
        return f"{value:,.0f}"
    return f"{value:g}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _rows(n: int) -> str:
    return _count(n, "row")


def _ridge_label(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"


def swept_dims(name: str, series: str) -> tuple[str, ...]:
    """The dims a sweep row varies, read from its name: 'q3[B=128,D=4096]' -> ('B', 'D')."""
    suffix = name[len(series) :] if name.startswith(series) else ""
    m = re.fullmatch(r"\[([^\[\]]*)\]", suffix)
    if not m:
        return ()
    dims = [part.split("=", 1)[0].strip() for part in m.group(1).split(",")]
    if not all(re.fullmatch(r"[A-Z]", d) for d in dims):
        return ()
    return tuple(dims)


# -- data preparation (pure) ---------------------------------------------------------------


def _floats(column: pd.Series) -> np.ndarray:
    """A numeric column (also Int64 with missing values) as floats, NaN where missing."""
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _bound_codes(frame: pd.DataFrame) -> np.ndarray:
    return pd.Categorical(frame["bound"], categories=BOUNDS).codes.astype(np.int8)


def _fits(frame: pd.DataFrame) -> np.ndarray:
    """True where the row fits HBM or its capacity is unknown."""
    return frame["fits"].astype("boolean").fillna(True).to_numpy(dtype=bool)


def _families(frame: pd.DataFrame) -> list[str]:
    """Peak families (catalog peak columns) of the compute dtypes that occur, in catalog order."""
    used = set(_family_map(frame).values())
    return [f for f in PEAK_FAMILIES if f in used]


def _ceilings(frame: pd.DataFrame, chip: dict) -> list[dict]:
    """One compute ceiling per peak used, lowest first: the catalog's peak for each compute
    dtype's family, else the rows' own. Families with the same peak share a ceiling."""
    by_peak: dict[float, list[str]] = {}
    sources: dict[float, str] = {}
    family_of = frame["compute_dtype"].map(_family_map(frame))
    for family in _families(frame):
        peak = chip.get(f"peak_{family}")
        source = "catalog"
        if peak is None or not np.isfinite(peak):
            peak = float(frame.loc[family_of == family, "peak_flops"].median())
            source = "rows"
        by_peak.setdefault(float(peak), []).append(family)
        sources[float(peak)] = source
    return [
        {
            "family": "/".join(families),
            "families": families,
            "peak": peak,
            "label": f"{'/'.join(families)} peak {si(peak, 'FLOP/s')}",
            "source": sources[peak],
        }
        for peak, families in sorted(by_peak.items())
    ]


def _family_map(frame: pd.DataFrame) -> dict[str, str]:
    return {d: peak_family(d) for d in pd.unique(frame["compute_dtype"])}


def _points(frame: pd.DataFrame, x: np.ndarray) -> dict:
    y = frame["attainable_flops"].to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return {
        "x": x[ok],
        "y": y[ok],
        "bound": _bound_codes(frame)[ok],
        "fits": _fits(frame)[ok],
        "in_sweep": (frame["name"] != frame["series"]).to_numpy(dtype=bool)[ok],
        "hidden": int((~ok).sum()),
    }


def _counts(frame: pd.DataFrame) -> dict[str, int]:
    counts = frame["bound"].value_counts()
    return {b: int(counts.get(b, 0)) for b in BOUNDS}


def _labels(frame: pd.DataFrame, x: np.ndarray) -> tuple[list[dict], list[dict]]:
    """Name labels for single rows and one trail per sweep series (when few enough)."""
    name = frame["name"].to_numpy(dtype=object)
    series = frame["series"].to_numpy(dtype=object)
    y = frame["attainable_flops"].to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    single = (name == series) & ok
    sweep_series = pd.unique(series[(name != series) & ok])
    if int(single.sum()) + len(sweep_series) > LABEL_LIMIT or int(ok.sum()) > SCATTER_LIMIT:
        return [], []
    labels = [
        {"text": str(n), "x": float(a), "y": float(b)}
        for n, a, b in zip(name[single], x[single], y[single], strict=True)
    ]
    trails = []
    for s in sweep_series:
        idx = np.flatnonzero((series == s) & (name != series) & ok)
        order = np.argsort(x[idx], kind="stable")
        trails.append({"text": str(s), "x": x[idx][order], "y": y[idx][order]})
    return labels, trails


def _chip_title(chip: dict, ceilings: list[dict], bandwidth_text: str) -> str:
    parts = [bandwidth_text]
    if chip.get("hbm_capacity"):
        parts.append(f"{si(chip['hbm_capacity'], 'B')} HBM")
    parts += [f"{c['family']} {si(c['peak'], 'FLOP/s')}" for c in ceilings]
    return " · ".join(parts)


def _chip_for(rows: pd.DataFrame, chip: dict | None, name: str) -> dict:
    """The catalog record, or one made from the rows' own numbers when the chip is unknown."""
    if chip is not None:
        return chip
    return {
        "name": name,
        "hbm_bandwidth": float(rows["hbm_bandwidth"].median()),
        "hbm_capacity": None,
    }


def roofline_data(results: pd.DataFrame, chip: dict) -> dict:
    """What the HBM roofline of one chip draws: slope, ceilings, ridges, points by bound."""
    name = str(chip["name"])
    rows = results[results["hardware"] == name]
    bw = chip.get("hbm_bandwidth")
    if bw is None or not np.isfinite(bw):
        bw = float(rows["hbm_bandwidth"].median())
    bw = float(bw)
    ceilings = _ceilings(rows, chip)
    x = rows["intensity"].to_numpy(dtype=float)
    labels, trails = _labels(rows, x)
    catalog_peak = {f: c["peak"] for c in ceilings for f in c["families"]}
    families = rows["compute_dtype"].map(_family_map(rows))
    family_of = families.map(catalog_peak).to_numpy(dtype=float)
    overridden = ~np.isclose(rows["peak_flops"].to_numpy(dtype=float), family_of, rtol=1e-9)
    overridden |= ~np.isclose(rows["hbm_bandwidth"].to_numpy(dtype=float), bw, rtol=1e-9)
    return {
        "kind": "roofline",
        "hardware": name,
        "title": f"{chart_text(name)} roofline: {_count(len(rows), 'scenario')}",
        "subtitle": _chip_title(chip, ceilings, f"HBM {si(bw, 'B/s')}"),
        "x_label": "Arithmetic intensity (FLOP/byte)",
        "y_label": "Attainable FLOP/s (per chip)",
        "slopes": [{"bandwidth": bw, "label": f"HBM {si(bw, 'B/s')}"}],
        "ceilings": ceilings,
        "ridges": [
            {"family": c["family"], "x": c["peak"] / bw, "y": c["peak"], "slope": 0}
            for c in ceilings
        ],
        "points": _points(rows, x),
        "counts": _counts(rows),
        "not_fitting": int((~_fits(rows)).sum()),
        "overridden": int(overridden.sum()),
        "labels": labels,
        "trails": trails,
    }


def network_data(results: pd.DataFrame, chip: dict) -> dict | None:
    """The network roofline of one chip's multi-chip rows, or None when it has none.

    x = per-chip FLOPs / network bytes (the array each chip contributes to the collective);
    the slope is the one-way link bandwidth and the ridge peak / one-way bandwidth (book,
    "Network communication rooflines": D/2 > 1.97e14 / 4.5e10 = 4377 on v5e). That is the
    exact boundary for a two-chip AllReduce on a ring; on a switch with N > 2 chips an
    AllReduce takes 2(N-1)/N V/W, so points sit somewhat right of where the line would put
    them. Points are drawn at their own attainable FLOP/s (HBM limits included).
    """
    name = str(chip["name"])
    rows = results[
        (results["hardware"] == name) & (results["chips"] > 1) & (results["network_bytes"] > 0)
    ]
    if rows.empty:
        return None
    ceilings = _ceilings(rows, chip)
    slopes = []
    for link in sorted(pd.unique(rows["link"].astype(str))):
        bw = chip.get(f"{link}_bandwidth")
        on_link = rows[rows["link"].astype(str) == link]
        if bw is None or not np.isfinite(bw):
            bw = float(on_link["link_bandwidth"].median())
        slopes.append({"bandwidth": float(bw), "label": f"{link.upper()} {si(bw, 'B/s')} one-way"})
    slopes.sort(key=lambda s: -s["bandwidth"])
    x = (rows["flops_per_chip"] / rows["network_bytes"]).to_numpy(dtype=float)
    labels, trails = _labels(rows, x)
    return {
        "kind": "network",
        "hardware": name,
        "title": f"{chart_text(name)} network roofline: {_count(len(rows), 'multi-chip scenario')}",
        "subtitle": _chip_title(chip, ceilings, " · ".join(s["label"] for s in slopes)),
        "x_label": "Network intensity (FLOP per byte sent between chips)",
        "y_label": "Attainable FLOP/s (per chip)",
        "slopes": slopes,
        "ceilings": ceilings,
        "ridges": [
            {"family": c["family"], "x": c["peak"] / s["bandwidth"], "y": c["peak"], "slope": i}
            for i, s in enumerate(slopes)
            for c in ceilings
        ],
        "points": _points(rows, x),
        "counts": _counts(rows),
        "not_fitting": int((~_fits(rows)).sum()),
        "overridden": 0,
        "labels": labels,
        "trails": trails,
    }


@dataclass
class _Line:
    series: str
    label: str
    rows: np.ndarray  # positions in the results frame


def _sweep_lines(results: pd.DataFrame) -> dict[tuple[str, str], list[_Line]]:
    """(hardware, swept dim) -> lines: one per series, or per combination of its other dims."""
    name = results["name"].to_numpy(dtype=object)
    series = results["series"].to_numpy(dtype=object)
    positions = np.flatnonzero(name != series)
    if len(positions) == 0:
        return {}
    keys = pd.DataFrame(
        {
            "hardware": results["hardware"].to_numpy(dtype=object)[positions],
            "series": series[positions],
        }
    )
    groups: dict[tuple[str, str], list[_Line]] = {}
    for (hw, s), idx in keys.groupby(["hardware", "series"], sort=True).indices.items():
        rows = positions[idx]
        dims = swept_dims(str(name[rows[0]]), str(s))
        if not dims or any(d not in results.columns for d in dims):
            continue
        others = dims[1:]
        if not others:
            groups.setdefault((hw, dims[0]), []).append(_Line(str(s), chart_text(s), rows))
            continue
        values = np.column_stack([_floats(results[d])[rows] for d in others])
        combos, inverse = np.unique(values, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        for k, combo in enumerate(combos):
            what = ", ".join(f"{d}={int(v)}" for d, v in zip(others, combo, strict=True))
            label = f"{chart_text(s, 36)} ({what})"
            groups.setdefault((hw, dims[0]), []).append(_Line(str(s), label, rows[inverse == k]))
    return groups


def _sweep_page(
    results: pd.DataFrame, chip: dict, dim: str, lines: list[_Line], page: int, pages: int
) -> dict:
    """The data of one sweep chart: lines of attainable FLOP/s against the swept dim."""
    hw = str(chip["name"])
    rows = results.iloc[np.concatenate([ln.rows for ln in lines])]
    ceilings = _ceilings(rows, chip)
    xs_all = []
    out_lines = []
    for ln in lines:
        part = results.iloc[ln.rows]
        x = _floats(part[dim])
        order = np.argsort(x, kind="stable")
        x = x[order]
        y = part["attainable_flops"].to_numpy(dtype=float)[order]
        bound = _bound_codes(part)[order]
        compute = np.flatnonzero(bound == 0)
        first = int(compute[0]) if len(compute) else None
        xs_all.append(x)
        out_lines.append(
            {
                "series": ln.series,
                "label": ln.label,
                "x": x,
                "y": y,
                "bound": bound,
                "fits": _fits(part)[order],
                "critical": float(x[first]) if first is not None else None,
                "critical_y": float(y[first]) if first is not None else None,
            }
        )
    xs = np.concatenate(xs_all)
    xs = xs[np.isfinite(xs) & (xs > 0)]
    uniq = np.unique(xs)
    steps = np.diff(uniq)
    log_x = bool(len(uniq) > 2 and uniq[-1] / uniq[0] >= 16 and not np.allclose(steps, steps[0]))
    page_text = f" ({page} of {pages})" if pages > 1 else ""
    return {
        "kind": "sweep",
        "hardware": hw,
        "dim": dim,
        "title": f"{chart_text(hw)}: attainable FLOP/s as {dim} grows{page_text}",
        "subtitle": _chip_title(chip, ceilings, f"HBM {si(chip['hbm_bandwidth'], 'B/s')}")
        if chip.get("hbm_bandwidth")
        else "",
        "x_label": f"{dim} (swept dimension)",
        "y_label": "Attainable FLOP/s (per chip)",
        "log_x": log_x,
        "ceilings": ceilings,
        "lines": out_lines,
    }


def _pages(lines: list[_Line]) -> list[list[_Line]]:
    n = SWEEP_LINES_PER_CHART
    return [lines[i : i + n] for i in range(0, len(lines), n)]


def sweep_data(results: pd.DataFrame, chip: dict) -> list[dict]:
    """Every sweep chart of one chip: one per swept dim (split into pages of ten lines)."""
    sub = results[results["hardware"] == str(chip["name"])]
    out = []
    for (_, dim), lines in sorted(_sweep_lines(sub).items()):
        pages = _pages(lines)
        for i, page in enumerate(pages, start=1):
            out.append(_sweep_page(sub, chip, dim, page, i, len(pages)))
    return out


def summary_data(results: pd.DataFrame) -> dict:
    """Count of compute-, memory- and network-bound rows per hardware."""
    table = (
        pd.crosstab(results["hardware"], results["bound"])
        .reindex(columns=list(BOUNDS), fill_value=0)
        .sort_index()
    )
    return {
        "kind": "summary",
        "title": f"Which limit binds: {len(results):,} scenarios by hardware",
        "hardware": [str(h) for h in table.index],
        "counts": {b: [int(v) for v in table[b]] for b in BOUNDS},
    }


# -- rendering -----------------------------------------------------------------------------


def _new_figure(height: float = FIGSIZE[1]) -> Figure:
    fig = Figure(figsize=(FIGSIZE[0], height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path: Path) -> Path:
    """Save as a 256-colour PNG: about a quarter of the bytes of full colour, no visible change
    on flat chart colours, so reports with many charts stay small enough to mail."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    image = PILImage.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba())
    palette = image.convert("RGB").quantize(
        colors=256, method=PILImage.Quantize.FASTOCTREE, dither=PILImage.Dither.NONE
    )
    # no Software/date metadata: the same chart gives the same bytes
    palette.save(path, format="PNG", dpi=(DPI, DPI))
    return path


def _titles(fig: Figure, title: str, subtitle: str, height: float = FIGSIZE[1]) -> None:
    fig.text(0.02, 1 - 0.19 / height, title, fontsize=12.5, fontweight="bold", va="top")
    if subtitle:
        fig.text(
            0.02, 1 - 0.46 / height, chart_text(subtitle, 140), fontsize=9, va="top", color="#444"
        )


def _flops_axis(ax, axis: str) -> None:
    fmt = FuncFormatter(lambda v, _: si(v, "FLOP/s") if v > 0 else "0")
    getattr(ax, f"{axis}axis").set_major_formatter(fmt)


def _log_limits(values: np.ndarray, pad: float, min_decades: float) -> tuple[float, float]:
    lo, hi = np.log10(values.min()) - np.log10(pad), np.log10(values.max()) + np.log10(pad)
    if hi - lo < min_decades:
        mid = (hi + lo) / 2
        lo, hi = mid - min_decades / 2, mid + min_decades / 2
    return 10**lo, 10**hi


def _axis_points(ax, x: np.ndarray, y: np.ndarray, step: float = 6.0) -> np.ndarray:
    """Display coordinates of a polyline, sampled every `step` pixels (label obstacles)."""
    pts = ax.transData.transform(np.column_stack([x, y]))
    out = [pts[:1]]
    for a, b in zip(pts[:-1], pts[1:], strict=True):
        n = max(int(np.hypot(*(b - a)) // step), 1)
        t = np.linspace(0, 1, n + 1)[1:, None]
        out.append(a + (b - a) * t)
    return np.concatenate(out)


def _draw_roofs(ax, data: dict, xlim: tuple[float, float]) -> tuple[list, list, list]:
    """Slopes, ceilings and ridges; returns (texts, ridge texts, obstacle points) for labels."""
    texts, obstacles = [], []
    top = max(c["peak"] for c in data["ceilings"])
    fastest = max(s["bandwidth"] for s in data["slopes"])
    for i, s in enumerate(data["slopes"]):
        end = top / s["bandwidth"]
        xs = np.array([xlim[0], end])
        ys = xs * s["bandwidth"]
        style = SERIES_STYLES[i % len(SERIES_STYLES)]
        ax.plot(xs, ys, color=ROOF_COLOR, lw=1.8, ls=style, zorder=2)
        obstacles.append(_axis_points(ax, xs, ys))
        # the label sits along the slope, a fifth of the way across, rotated to match it
        lx = 10 ** (np.log10(xlim[0]) + 0.2 * (np.log10(end) - np.log10(xlim[0])))
        p0, p1 = ax.transData.transform([(lx, lx * s["bandwidth"]), (end, top)])
        angle = float(np.degrees(np.arctan2(p1[1] - p0[1], p1[0] - p0[0])))
        texts.append(
            ax.annotate(
                s["label"],
                (lx, lx * s["bandwidth"]),
                xytext=(-4, 6),
                textcoords="offset points",
                rotation=angle,
                rotation_mode="anchor",
                ha="left",
                va="bottom",
                fontsize=8.5,
                color=ROOF_COLOR,
            )
        )
    for c in data["ceilings"]:
        xs = np.array([c["peak"] / fastest, xlim[1]])
        ys = np.array([c["peak"], c["peak"]])
        ax.plot(xs, ys, color=ROOF_COLOR, lw=1.8, zorder=2)
        obstacles.append(_axis_points(ax, xs, ys))
        texts.append(
            ax.annotate(
                c["label"],
                (xlim[1], c["peak"]),
                xytext=(-6, 3),
                textcoords="offset points",
                ha="right",
                va="bottom",
                fontsize=8.5,
                color=ROOF_COLOR,
            )
        )
    ylo = ax.get_ylim()[0]
    last_px = -1e9
    right = True
    ridges = []
    for r in sorted(data["ridges"], key=lambda r: r["x"]):
        ax.plot([r["x"], r["x"]], [ylo, r["y"]], color="#888", lw=0.8, ls=":", zorder=1)
        ax.plot([r["x"]], [r["y"]], marker="D", ms=5, color=ROOF_COLOR, zorder=6)
        px = ax.transData.transform((r["x"], r["y"]))
        obstacles.append(px[None, :])
        right = not right if px[0] - last_px < 16 else True  # two close ridges: one each side
        last_px = px[0]
        ridges.append(
            ax.annotate(
                f"ridge {_ridge_label(r['x'])} FLOP/byte ({r['family']})",
                (r["x"], ylo),
                xytext=(3 if right else -3, 4),
                textcoords="offset points",
                rotation=90,
                ha="left" if right else "right",
                va="bottom",
                fontsize=7.5,
                color="#555",
            )
        )
    return texts, ridges, obstacles


def _draw_points(ax, data: dict, xlim, ylim) -> tuple[list, str]:
    """Scenario points by bound; returns legend handles and the drawing mode."""
    p = data["points"]
    n = len(p["x"])
    handles = []
    dense = n > SCATTER_LIMIT
    if dense:
        _draw_density(ax, p, xlim, ylim)
    few = n <= LABEL_LIMIT or bool(data["labels"] or data["trails"])
    for t in data["trails"]:
        ax.plot(t["x"], t["y"], color="#999", lw=1.0, zorder=3)
    size, alpha = (40, 0.95) if few else (12, 0.55)
    for code, bound in enumerate(BOUNDS):
        count = data["counts"][bound]
        color = BOUND_COLORS[bound]
        label = f"{bound}-bound ({count:,})"
        if dense:
            handles.append(Patch(facecolor=color, alpha=0.8, label=label))
            continue
        sel = p["bound"] == code
        small = p["in_sweep"] if data["trails"] else np.zeros(n, dtype=bool)  # many, close
        for mask, s in ((sel & ~small, size), (sel & small, 10)):
            fit, unfit = mask & p["fits"], mask & ~p["fits"]
            common = dict(marker=BOUND_MARKERS[bound], s=s, zorder=5, rasterized=not few)
            if fit.any():
                ax.scatter(
                    p["x"][fit], p["y"][fit], color=color, alpha=alpha, linewidths=0, **common
                )
            if unfit.any():
                ax.scatter(
                    p["x"][unfit],
                    p["y"][unfit],
                    facecolors="none",
                    edgecolors=color,
                    linewidths=1.2,
                    **common,
                )
        handles.append(
            Line2D([], [], ls="", marker=BOUND_MARKERS[bound], color=color, ms=7, label=label)
        )
    if data["not_fitting"]:
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker="x" if dense else "o",
                ms=6 if dense else 7,
                markerfacecolor="none",
                markeredgecolor="#222",
                label=f"does not fit in HBM ({data['not_fitting']:,})",
            )
        )
    if data["trails"]:  # named in the legend: their own sweep charts show them in full
        names = [chart_text(t["text"], 24) for t in data["trails"]]
        shown = ", ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "")
        handles.append(Line2D([], [], color="#999", lw=1.5, label=f"sweep: {shown}"))
    if dense:
        handles.append(Patch(facecolor="#999", alpha=0.35, label="lighter = fewer scenarios"))
    return handles, ("dense" if dense else "few" if few else "scatter")


def _draw_density(ax, p: dict, xlim, ylim) -> None:
    """Binned density: each bin coloured by its most common bound, shaded by its count."""
    nx, ny = DENSITY_BINS
    xe = np.linspace(np.log10(xlim[0]), np.log10(xlim[1]), nx + 1)
    ye = np.linspace(np.log10(ylim[0]), np.log10(ylim[1]), ny + 1)
    lx, ly = np.log10(p["x"]), np.log10(p["y"])
    hist = np.stack(
        [
            np.histogram2d(lx[p["bound"] == k], ly[p["bound"] == k], bins=[xe, ye])[0]
            for k in range(len(BOUNDS))
        ]
    )
    total = hist.sum(axis=0)
    dominant = hist.argmax(axis=0)
    rgba = np.zeros((nx, ny, 4))
    palette = np.array([_rgb(BOUND_COLORS[b]) for b in BOUNDS])
    rgba[..., :3] = palette[dominant]
    shade = np.log1p(total) / np.log1p(max(total.max(), 1))
    rgba[..., 3] = np.where(total > 0, 0.45 + 0.55 * shade, 0.0)
    # above the roof lines: most scenarios sit on a roof, and the colour is what matters there
    ax.pcolormesh(10**xe, 10**ye, rgba.transpose(1, 0, 2), shading="flat", zorder=4)
    unfit = ~p["fits"]
    if unfit.any():
        h = np.histogram2d(lx[unfit], ly[unfit], bins=[xe, ye])[0]
        ix, iy = np.nonzero(h)
        cx = 10 ** ((xe[ix] + xe[ix + 1]) / 2)
        cy = 10 ** ((ye[iy] + ye[iy + 1]) / 2)
        ax.scatter(cx, cy, s=10, marker="x", color="#222", linewidths=0.6, alpha=0.8, zorder=6)


def _rgb(color: str) -> tuple[float, float, float]:
    return tuple(int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))


def _roofline_figure(data: dict, path: Path) -> Path:
    fig = _new_figure()
    ax = fig.subplots()
    fig.subplots_adjust(left=0.15, right=0.975, bottom=0.11, top=0.86)
    ax.set_xscale("log")
    ax.set_yscale("log")
    p = data["points"]
    ridge_x = np.array([r["x"] for r in data["ridges"]])
    peaks = np.array([c["peak"] for c in data["ceilings"]])
    xlim = _log_limits(np.concatenate([p["x"], ridge_x]), pad=4.0, min_decades=2.5)
    # every point stays on the chart; the top leaves room for the ceiling labels
    ylo = min(float(np.concatenate([p["y"], peaks]).min()) / 2.5, peaks.max() / 100)
    ylim = (ylo, peaks.max() * 3.5)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, numticks=12))
        # minor ticks at 2 and 5 only: each tick is a costly artist, and 8 per decade over
        # ten decades made tick drawing most of a chart's render time
        axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0), numticks=12))
        axis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _intensity_label(v)))
    _flops_axis(ax, "y")
    ax.grid(True, which="major", color="#e3e3e3", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(data["x_label"])
    ax.set_ylabel(data["y_label"])
    texts, ridge_texts, obstacles = _draw_roofs(ax, data, xlim)
    handles, mode = _draw_points(ax, data, xlim, ylim)
    legend = ax.legend(
        handles=handles, loc="upper left", fontsize=8, framealpha=0.92, borderaxespad=0.6
    )
    legend.set_zorder(8)
    notes = []
    if data["overridden"]:
        n = data["overridden"]
        notes.append(
            f"{_rows(n)} {'gives its' if n == 1 else 'give their'} own peak or HBM bandwidth "
            f"(drawn at {'its' if n == 1 else 'their'} own values; the roofs are the catalog's)"
        )
    if p["hidden"]:
        notes.append(f"{_rows(p['hidden'])} not drawn (no bytes or no FLOPs)")
    if notes:
        fig.text(0.01, 0.012, "; ".join(notes), fontsize=7.5, color="#555", va="bottom")
    _titles(fig, data["title"], data["subtitle"])
    if mode == "few" and (data["labels"] or data["trails"]):
        renderer = fig.canvas.get_renderer()
        boxes = [t.get_window_extent(renderer).padded(2) for t in [*texts, legend]]
        faint = [t.get_window_extent(renderer).padded(1) for t in ridge_texts]
        pts = [ax.transData.transform(np.column_stack([p["x"], p["y"]]))]
        pts += [_axis_points(ax, t["x"], t["y"], step=8) for t in data["trails"]]
        items = cluster_labels(ax, data["labels"])
        place_labels(fig, ax, items, boxes, faint, np.concatenate([*obstacles, *pts]))
    return _save(fig, path)


def plot_roofline(data: dict, path: Path) -> Path:
    """Draw an HBM roofline (from `roofline_data`) and write it as a PNG; returns the path."""
    return _roofline_figure(data, Path(path))


def plot_network(data: dict, path: Path) -> Path:
    """Draw a network roofline (from `network_data`) and write it as a PNG; returns the path."""
    return _roofline_figure(data, Path(path))


def plot_sweep(data: dict, path: Path) -> Path:
    """Draw attainable FLOP/s against a swept dim, one line per series (book Q3 figure)."""
    lines = data["lines"]
    unfit = any(not ln["fits"].all() for ln in lines)
    ncols = 1 if len(lines) + unfit == 1 else 2
    rows = -(-(len(lines) + unfit) // ncols)
    legend_in = 0.12 + 0.2 * rows  # the legend sits under the axes and never covers a line
    height = FIGSIZE[1] + legend_in
    fig = _new_figure(height)
    ax = fig.subplots()
    fig.subplots_adjust(
        left=0.17, right=0.975, bottom=(0.62 + legend_in) / height, top=1 - 0.77 / height
    )
    if data["log_x"]:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(
            FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
        )
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    peaks = [c["peak"] for c in data["ceilings"]]
    top = max(peaks + [float(np.nanmax(ln["y"])) for ln in lines])
    ax.set_ylim(0, top * 1.17)
    _flops_axis(ax, "y")
    ax.grid(True, color="#e3e3e3", lw=0.6)
    ax.set_axisbelow(True)
    xs = np.concatenate([ln["x"] for ln in lines])
    if data["log_x"]:
        ax.set_xlim(xs.min() / 1.2, xs.max() * 1.2)
    else:
        span = xs.max() - xs.min() or 1.0
        ax.set_xlim(max(xs.min() - 0.02 * span, 0), xs.max() + 0.02 * span)
    for c in data["ceilings"]:
        ax.axhline(c["peak"], color=ROOF_COLOR, lw=1.2, ls="--", zorder=2)
        ax.annotate(
            c["label"],
            (1.0, c["peak"]),
            xycoords=("axes fraction", "data"),
            xytext=(-6, -4),
            textcoords="offset points",
            ha="right",
            va="top",
            fontsize=8.5,
            color=ROOF_COLOR,
        )
    dim = data["dim"]
    for i, ln in enumerate(lines):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        style = SERIES_STYLES[(i // len(SERIES_COLORS)) % len(SERIES_STYLES)]
        crit = ln["critical"]
        reach = (
            f"compute-bound from {dim} = {crit:,.0f}"
            if crit is not None
            else "never compute-bound here"
        )
        ax.plot(
            ln["x"],
            ln["y"],
            color=color,
            ls=style,
            lw=2.0,
            label=f"{ln['label']}: {reach}",
            zorder=4,
        )
        bad = ~ln["fits"]
        if bad.any():
            ax.scatter(
                ln["x"][bad],
                ln["y"][bad],
                facecolors="none",
                edgecolors=color,
                s=18,
                linewidths=1.0,
                zorder=5,
            )
        if crit is not None:
            ax.plot([crit, crit], [0, ln["critical_y"]], color=color, lw=0.9, ls=":", zorder=3)
            ax.plot([crit], [ln["critical_y"]], marker="o", ms=6, color=color, zorder=6)
    _critical_labels(fig, ax, lines, dim)
    if unfit:
        ax.scatter([], [], facecolors="none", edgecolors="#333", s=18, label="does not fit in HBM")
    ax.set_xlabel(data["x_label"])
    ax.set_ylabel(data["y_label"])
    fig.legend(
        loc="lower left",
        bbox_to_anchor=(0.02, 0.1 / height),
        ncols=ncols,
        fontsize=8.5,
        frameon=False,
        handlelength=2.5,
    )
    _titles(fig, data["title"], data["subtitle"], height)
    return _save(fig, Path(path))


def _critical_labels(fig, ax, lines: list[dict], dim: str) -> None:
    """'B = 137' beside each line's first compute-bound point; equal values share a label,
    labels too close to the previous one step up."""
    points: dict[float, tuple[float, str]] = {}
    for i, ln in enumerate(lines):
        if ln["critical"] is not None and ln["critical"] not in points:
            color = SERIES_COLORS[i % len(SERIES_COLORS)]
            points[ln["critical"]] = (ln["critical_y"], color)
    renderer = fig.canvas.get_renderer()
    placed: list = []
    for crit, (y, color) in sorted(points.items()):
        shared = sum(ln["critical"] == crit for ln in lines) > 1
        for step in range(len(points) + 1):
            ann = ax.annotate(
                f"{dim} = {crit:,.0f}",
                (crit, y),
                xytext=(0, 7 + 13 * step),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=8.5,
                fontweight="bold",
                color="#222" if shared else color,
                zorder=7,
            )
            box = ann.get_window_extent(renderer).padded(2)
            if step == len(points) or not any(box.overlaps(b) for b in placed):
                break
            ann.remove()
        placed.append(box)


def plot_summary(data: dict, path: Path) -> Path:
    """Stacked bars: compute/memory/network-bound scenario counts per hardware."""
    names = data["hardware"]
    height = min(1.9 + 0.42 * len(names), 30.0)
    fig = _new_figure(height)
    ax = fig.subplots()
    fig.subplots_adjust(left=0.2, right=0.95, bottom=0.62 / height, top=1 - 1.0 / height)
    pos = np.arange(len(names))[::-1]
    totals = np.sum([data["counts"][b] for b in BOUNDS], axis=0)
    biggest = max(int(totals.max()), 1)
    left = np.zeros(len(names))
    for bound in BOUNDS:
        vals = np.array(data["counts"][bound], dtype=float)
        ax.barh(
            pos,
            vals,
            left=left,
            color=BOUND_COLORS[bound],
            height=0.62,
            label=f"{bound}-bound ({int(vals.sum()):,})",
        )
        for y, v, x0 in zip(pos, vals, left, strict=True):
            if v / biggest >= 0.07:
                text_color = "#222" if bound == "memory" else "white"
                ax.text(
                    x0 + v / 2,
                    y,
                    f"{int(v):,}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color=text_color,
                )
        left = left + vals
    for y, total in zip(pos, totals, strict=True):
        ax.text(total + biggest * 0.01, y, f"{int(total):,}", va="center", fontsize=8)
    ax.set_yticks(pos, labels=[chart_text(n, 28) for n in names], fontsize=9)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlim(0, biggest * 1.12)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    # room on the left for the longest hardware name, measured
    renderer = fig.canvas.get_renderer()
    widest = max(t.get_window_extent(renderer).width for t in ax.get_yticklabels())
    left_margin = min((widest + 24) / (FIGSIZE[0] * DPI), 0.45)
    fig.subplots_adjust(left=left_margin)
    ax.set_xlabel("Scenarios (count)")
    ax.grid(True, axis="x", color="#e3e3e3", lw=0.6)
    ax.set_axisbelow(True)
    fig.legend(
        loc="upper left",
        bbox_to_anchor=(left_margin, 1 - 0.5 / height),
        ncols=3,
        fontsize=8.5,
        frameon=False,
        borderaxespad=0,
        handlelength=1.6,
    )
    fig.text(0.02, 1 - 0.14 / height, data["title"], fontsize=12.5, fontweight="bold", va="top")
    return _save(fig, Path(path))


PLOTTERS: dict[str, Callable[[dict, Path], Path]] = {
    "roofline": plot_roofline,
    "network": plot_network,
    "sweep": plot_sweep,
    "summary": plot_summary,
}


def _render_one(kind: str, data: dict, path: str) -> float:
    """Render one chart; seconds taken. Module-level so worker processes can run it."""
    t = time.perf_counter()
    PLOTTERS[kind](data, Path(path))
    return time.perf_counter() - t


# -- planning and the run ------------------------------------------------------------------


def plan_charts(results: pd.DataFrame, hardware: list[dict]) -> list[_Spec]:
    """Every chart a run could draw, in priority order, with unique sanitized file stems.

    Order: the summary, a roofline per chip (A-Z), a network roofline per chip with
    communicating multi-chip rows, then the sweep charts. Data is built only for the charts
    a run keeps (`_Spec.build`).
    """
    if results.empty:
        return []
    chips = {str(h["name"]): h for h in hardware}
    used = sorted(str(h) for h in pd.unique(results["hardware"]))
    rows_of = {hw: results[results["hardware"] == hw] for hw in used}
    chip = {hw: _chip_for(rows_of[hw], chips.get(hw), hw) for hw in used}
    taken: set[str] = set()
    specs: list[_Spec] = []

    def add(kind: str, stem: str, title: str, hw, build, cost: int, series=()) -> None:
        specs.append(_Spec(kind, _unique(stem, taken), title, hw, tuple(series), build, cost))

    add("summary", "summary", "Bound per hardware", None, partial(summary_data, results), 0)
    for hw in used:
        build = partial(roofline_data, rows_of[hw], chip[hw])
        add("roofline", f"roofline-{safe_stem(hw)}", f"{hw} roofline", hw, build, len(rows_of[hw]))
    for hw in used:
        rows = rows_of[hw]
        multi = int(((rows["chips"] > 1) & (rows["network_bytes"] > 0)).sum())
        if multi:
            build = partial(network_data, rows, chip[hw])
            add("network", f"network-{safe_stem(hw)}", f"{hw} network roofline", hw, build, multi)
    for (hw, dim), lines in sorted(_sweep_lines(results).items()):
        pages = _pages(lines)
        for i, page in enumerate(pages, start=1):
            part = f"-{i}" if len(pages) > 1 else ""
            of = f" ({i} of {len(pages)})" if len(pages) > 1 else ""
            build = partial(_sweep_page, results, chip[hw], dim, page, i, len(pages))
            cost = sum(len(ln.rows) for ln in page)
            series = dict.fromkeys(ln.series for ln in page)
            stem = f"sweep-{safe_stem(hw)}-{dim.lower()}{part}"
            add("sweep", stem, f"{hw}: attainable FLOP/s vs {dim}{of}", hw, build, cost, series)
    return specs


def _left_out_notice(dropped: list[_Spec], max_charts: int, total: int) -> str:
    by_kind: dict[str, int] = {}
    for s in dropped:
        by_kind[s.kind] = by_kind.get(s.kind, 0) + 1
    parts = [
        f"{n:,} {KIND_NAMES[k][0] if n == 1 else KIND_NAMES[k][1]}"
        for k in KIND_ORDER
        if (n := by_kind.get(k, 0))
    ]
    what = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    names = ""
    if len(dropped) <= 5:
        names = " (" + ", ".join(f"{s.stem}.png" for s in dropped) + ")"
    return (
        f"Drew {total - len(dropped):,} of {total:,} charts (chart limit {max_charts:,}, "
        f"--max-charts); left out {what}{names}."
    )


def _start_method() -> str:
    """How worker processes start.

    fork when that is safe: on Linux, from a process running no other Python thread. A worker
    then starts in milliseconds with matplotlib already imported. Forking while another thread
    may hold a lock (an import, a log handler) can deadlock the child, so a multi-threaded
    caller, macOS and Windows get spawn, which re-imports the package in each worker (about a
    second each).
    """
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _worker_count(workers: int | None, jobs: int, method: str) -> int:
    if workers is None:
        least = PARALLEL_MIN_CHARTS if method == "fork" else 3 * PARALLEL_MIN_CHARTS
        if jobs < least:
            return 1
        return max(1, min(os.cpu_count() or 1, jobs))
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    return min(workers, max(jobs, 1))


def render_charts(
    results: pd.DataFrame,
    hardware: list[dict],
    out_dir: Path,
    *,
    max_charts: int = DEFAULT_MAX_CHARTS,
    workers: int | None = None,
) -> ChartSet:
    """Render every chart of a run into out_dir (at most max_charts); see the module docstring.

    workers=1 renders in this process; None uses every core when there are enough charts to
    pay for starting workers; N > 1 uses N worker processes. Workers get only the prepared
    plain data of their chart, never the results frame.
    """
    if max_charts < 0:
        raise ValueError(f"max_charts must be 0 or more, got {max_charts}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    specs = plan_charts(results, hardware)
    kept, dropped = specs[:max_charts], specs[max_charts:]
    jobs = [(s.kind, s.build(), str(out_dir / f"{s.stem}.png")) for s in kept]
    method = _start_method()
    n_workers = _worker_count(workers, len(jobs), method)
    if n_workers <= 1:
        seconds = [_render_one(*job) for job in jobs]
    else:
        order = sorted(range(len(jobs)), key=lambda i: -kept[i].cost)  # biggest first
        context = multiprocessing.get_context(method)
        # a Pool's exit terminates its workers, so an interrupted run (Ctrl-C, SIGTERM) does
        # not wait for them; a run killed outright takes them with it (init_worker)
        with context.Pool(n_workers, initializer=init_worker, initargs=(os.getpid(),)) as pool:
            pending = {i: pool.apply_async(_render_one, jobs[i]) for i in order}
            seconds = [pending[i].get() for i in range(len(jobs))]
    folder = out_dir.name
    charts = [
        Chart(
            kind=s.kind,
            title=s.title,
            path=f"{folder}/{s.stem}.png",
            hardware=s.hardware,
            series=s.series,
        )
        for s in kept
    ]
    notices = [_left_out_notice(dropped, max_charts, len(specs))] if dropped else []
    return ChartSet(
        charts=charts,
        left_out=len(dropped),
        notices=notices,
        seconds={c.path: t for c, t in zip(charts, seconds, strict=True)},
    )
