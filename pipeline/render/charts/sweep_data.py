"""The data of sweep charts: their lines (summary.turns.sweep_lines: a sweep series, or one
combination of its other swept dims, each with its turn) onto pages, and each chart's lines of
attainable FLOP/s against the swept dim."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.model.roofs import ChipRoofs
from pipeline.render import format as fmt
from pipeline.render.charts.data import (
    SWEEP_LINES_PER_CHART,
    SweepData,
    SweepLine,
    ceilings_of,
    floats,
    subtitle,
)
from pipeline.render.charts.labels import chart_text
from pipeline.summary.turns import BYTES, LinePlan


def label_of(line: LinePlan) -> str:
    """A line's legend label: its series, and the values of its other swept dims in brackets."""
    if not line.detail:
        return chart_text(line.series)
    return f"{chart_text(line.series, 36)} ({line.detail})"


def pages(lines: list[LinePlan]) -> list[list[LinePlan]]:
    """Lines onto charts of at most SWEEP_LINES_PER_CHART, a series never split: whole
    series fill a chart in order, and a series with more lines (one per combination of its
    other dims and fleet axes) gets one chart of its own, with that many of its lines evenly
    spaced in their numeric order, the first and the last kept, each marked `of` how many
    it has: one sweep chart per chip and series, however large the sweep."""
    n = SWEEP_LINES_PER_CHART
    names = np.array([ln.series for ln in lines], dtype=object)  # a line per combination
    starts = np.flatnonzero(np.r_[True, names[1:] != names[:-1]]) if len(lines) else []
    out: list[list[LinePlan]] = []
    page: list[LinePlan] = []
    for start, end in zip(starts, [*starts[1:], len(lines)], strict=True):  # per series
        run = lines[start:end]
        if len(run) > n:
            run = [replace(run[k], of=len(run)) for k in _spread(run, n)]
        if page and len(page) + len(run) > n:
            out.append(page)
            page = []
        page = [*page, *run]
    return [*out, page] if page else out


def _spread(run: list[LinePlan], n: int) -> list[int]:
    """`n` of a series' lines spread over its values (farthest first: the corners, every
    dim's first and last value, then between them), in their order."""
    places = np.array([ln.place for ln in run], dtype=float).reshape(len(run), -1)
    picked, gap = [0], np.linalg.norm(places - places[0], axis=1)
    while len(picked) < n:
        k = int(np.argmax(gap))  # the first of the farthest: ties in line order
        picked.append(k)
        gap = np.minimum(gap, np.linalg.norm(places - places[k], axis=1))
    return sorted(picked)


def drawn_text(lines: list[LinePlan]) -> str:
    """A chart's note of the lines pages() left out: ' (10 of 54 lines)', else ''."""
    of = max((ln.of for ln in lines), default=0)
    return " " + _("({n} of {of} lines)", n=len(lines), of=of) if of else ""


def page_of(page: int, of: int) -> str:
    """A chart's page among its sweep's: ' (2 of 3)', else ''."""
    return " " + _("({page} of {of})", page=page, of=of) if of > 1 else ""


def sweep_data(
    results: pd.DataFrame,
    chip: Mapping,
    roofs: ChipRoofs,
    dim: str,
    lines: list[LinePlan],
    page: int,
    of: int,
) -> SweepData:
    """One sweep chart: lines of attainable FLOP/s against the swept dim, under the peaks
    (Summary.roofs) of the families its rows compute in, or of a collective's time against
    its bytes."""
    if dim == BYTES:
        return _time_data(results, chip, lines, page, of)
    hw = str(chip["name"])
    rows = results.iloc[np.concatenate([ln.rows for ln in lines])]
    ceilings = ceilings_of(roofs.peaks_of(set(rows["peak_family"])))
    ordered = [_ordered(results, ln, dim, "attainable_flops") for ln in lines]
    xs = np.concatenate([o[2] for o in ordered])
    uniq = np.unique(xs[np.isfinite(xs) & (xs > 0)])
    steps = np.diff(uniq)
    log_x = bool(len(uniq) > 2 and uniq[-1] / uniq[0] >= 16 and not np.allclose(steps, steps[0]))
    out_lines = []
    for ln, (part, order, x, y) in zip(lines, ordered, strict=True):
        out_lines.append(_line(ln, part, order, x, y, *_turn(ln.turn, dim, x, y, log_x)))
    page_text = page_of(page, of) + drawn_text(lines)
    bw = chip.get("hbm_bandwidth")
    return SweepData(
        hardware=hw,
        dim=dim,
        title=_("{chip}: attainable FLOP/s as {dim} grows", chip=chart_text(hw), dim=dim)
        + page_text,
        subtitle=subtitle(chip, ceilings, f"HBM {fmt.bandwidth(bw)}") if bw else "",
        x_label=_("{dim} (swept dimension)", dim=dim),
        y_label=_("Attainable FLOP/s (per chip)"),
        log_x=log_x,
        ceilings=ceilings,
        lines=tuple(out_lines),
    )


def _turn(turn: Mapping, dim: str, x: np.ndarray, y: np.ndarray, log_x: bool = True):
    """A line's turn as the summary has it (summary.turns, the series lines' rule): where it
    turns compute-bound (the exact critical batch, B = 319 between the swept 256 and 512) and
    the line's height there as drawn (on the segment between the swept points around it, so
    the marker sits on the curve it labels), or no turn and what the legend says of the line
    instead ('' for the default, never compute-bound)."""
    if turn["change_dim"] == dim:
        at = float(turn["change_at"])
        return at, _on_line(x, y, at, log_x), ""
    if not turn["compute"]:
        return None, None, ""
    if turn["bound"] == "compute":
        return None, None, _("compute-bound throughout")
    terms = {"compute": _("compute"), "memory": _("memory"), "network": _("network")}
    counts = [_("{n} {bound}", n=fmt.count(turn[b]), bound=t) for b, t in terms.items() if turn[b]]
    return None, None, _("mixed: {counts}", counts=", ".join(counts))


def _on_line(x: np.ndarray, y: np.ndarray, at: float, log_x: bool) -> float:
    """The height at `at` of the polyline through (x, y) as the sweep chart draws it:
    straight segments on its linear FLOP/s axis against a log x axis when `log_x`, else a
    linear one; the nearest end outside the points."""
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0 if log_x else True)
    if not ok.any():
        return float(y[min(int(np.searchsorted(x, at)), len(x) - 1)])
    xs, where = (np.log(x[ok]), np.log(at)) if log_x else (x[ok], at)
    return float(np.interp(where, xs, y[ok]))


def _ordered(results: pd.DataFrame, ln: LinePlan, x_column: str, y_column: str):
    """A line's rows, their order by x, and x and y in that order."""
    part = results.iloc[ln.rows]
    x = floats(part[x_column])
    order = np.argsort(x, kind="stable")
    return part, order, x[order], part[y_column].to_numpy(dtype=float)[order]


def _line(ln: LinePlan, part, order, x, y, critical, critical_y, reach: str = "") -> SweepLine:
    return SweepLine(
        series=ln.series,
        label=label_of(ln),
        x=x,
        y=y,
        bound=part["bound_code"].to_numpy()[order],
        fits=part["fits_hbm"].to_numpy(dtype=bool)[order],
        critical=critical,
        critical_y=critical_y,
        reach=reach,
        detail=ln.detail,
    )


def _time_data(
    results: pd.DataFrame, chip: dict, lines: list[LinePlan], page: int, of: int
) -> SweepData:
    """A collective's time against its bytes V, log-log: flat at the hop-latency floor, then
    rising with V. Each line's knee (`critical`) is the V at which the bandwidth time meets
    the floor, phases x hop latency x N / 2 with the chip's latency for the row's link (the
    rows' fact latency_knee, model.collectives)."""
    hw = str(chip["name"])
    out_lines = []
    for ln in lines:
        part, order, x, y = _ordered(results, ln, "network_bytes", "t_network")
        knees = part["latency_knee"].to_numpy(dtype=float)[order]  # facts of each row
        floor = part["latency_floor"].to_numpy(dtype=float)[order]
        with np.errstate(invalid="ignore"):
            past = np.flatnonzero(x > knees * (1 + 1e-9))
        knee = knee_y = None
        if np.isnan(knees).any():
            reach = ""  # no hop latency known for the link: no knee to mark
        elif not len(past):
            reach = _("latency-bound throughout")
        elif past[0] == 0:
            reach = _("bandwidth-bound throughout")
        else:  # the first point past the knee: the line is drawn through the knee, on the floor
            i = int(past[0])
            knee, knee_y = float(knees[i]), float(floor[i])
            per_chip = knee / float(floats(part["chips"])[order][i])
            reach = _("latency-bound below {size} ({per_chip} per chip)", size=fmt.size(knee),
                      per_chip=fmt.size(per_chip))  # fmt: skip
        out_lines.append(_line(ln, part, order, x, y, knee, knee_y, reach))
    drawn = results.iloc[np.concatenate([ln.rows for ln in lines])]  # a collective's rows
    links = sorted(set(drawn["link"].astype(str)))
    page_text = page_of(page, of) + drawn_text(lines)
    parts = []
    for lk in links:
        bw, lat = chip.get(f"{lk}_bandwidth"), chip.get(f"{lk}_latency")
        if bw:
            values = {"link": lk.upper(), "bandwidth": fmt.bandwidth(bw)}
            parts.append(
                _("{link} {bandwidth} one-way, {latency} per hop", latency=fmt.seconds(lat),
                  **values)
                if lat
                else _("{link} {bandwidth} one-way", **values)
            )  # fmt: skip
    return SweepData(
        hardware=hw,
        dim=BYTES,
        title=_("{chip}: collective time as bytes grows", chip=chart_text(hw)) + page_text,
        subtitle=" · ".join(parts),
        x_label=_("bytes (V, the whole array)"),
        y_label=_("Time (t_network)"),
        log_x=True,
        ceilings=(),
        lines=tuple(out_lines),
        measure="time",
    )
