"""The answer first, in words: the run's bottom line and one line per series (how long, bound
by what, does it fit), worded once here from the model's series table (Summary.lines) for
every output a person reads: the report's top, the workbook's first sheet, the notebook."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.model.roofline import BOUNDS
from pipeline.model.shapes import series_shapes, series_sizes
from pipeline.model.turns import MIXED
from pipeline.record import Record
from pipeline.render import format as fmt

# what each bound means to someone deciding what to buy or change (said where it appears)
MEANING = {
    "compute": "compute-bound: more FLOP/s helps; faster HBM does not",
    "memory": "memory-bound: faster HBM helps; more FLOP/s does not (a bigger batch may)",
    "network": "network-bound: a faster link, or less data between chips, helps",
    MIXED: "changes along the sweep: see where",
}
SERIES_ROWS = 50  # series lines shown first (report top, workbook first sheet, notebook)
# a series' dtypes and chip counts (Summary.lines): a column shown only when a series differs
DEFAULTS = {"dtype": "bf16", "chips": "1"}


def bottom_line(bottom: Mapping) -> str:
    """The run in one or two plain sentences: series and scenarios, what bounds them, the
    slowest, whether everything fits."""
    if not bottom.get("series"):
        return "No scenario was computed: every row was rejected (see the errors)."
    bounds = bottom["bounds"]
    parts = [f"{fmt.count(bounds[b])} {b}-bound" for b in BOUNDS if bounds[b]]
    if bounds.get(MIXED):
        turning = bottom["changing"]
        parts.append(
            f"{fmt.count(bounds[MIXED])} change along their sweep"
            + (f" ({fmt.count(turning)} turn compute-bound as the batch grows)" if turning else "")
        )
    scenarios = fmt.plural(bottom["scenarios"], "scenario")
    head = (
        f"{fmt.count(bottom['series'])} series ({scenarios}) on "
        f"{fmt.plural(bottom['chips'], 'chip')}: {', '.join(parts)}."
    )
    slowest = ""
    if bottom.get("slowest") is not None:
        slowest = f" Slowest: {bottom['slowest']}, {fmt.seconds(bottom['slowest_time'])}."
    unfit = bottom["not_fitting"]
    fits = (
        " Everything fits in HBM."
        if not unfit
        else f" {fmt.count(unfit)} series do{'es' if unfit == 1 else ''} not fit in HBM."
    )
    return head + slowest + fits


def series_rows(record: Record, limit: int = SERIES_ROWS) -> list[dict]:
    """The first `limit` series as plain records: the numbers (SI) and their words."""
    lines = record.summary.lines.head(limit)
    if lines.empty:
        return []
    shapes = series_shapes(record.results, lines.index)
    shapes.update(_custom_sizes(record.results, lines.index[lines["op"] == "custom"]))
    rows = []
    for name, line in lines.iterrows():  # at most `limit` series: a table, not the rows
        t_min, t_max = float(line["t_min"]), float(line["t_max"])
        rows.append(
            {
                "series": str(name),
                "hardware": line["hardware"],
                "op": line["op"],
                "shape": shape_text(shapes.get(str(name), ""), line),
                "dtype": str(line["dtype"]),
                "chips": str(line["chips"]),
                "scenarios": int(line["scenarios"]),
                "t_min": t_min,
                "t_max": t_max,
                "time": time_text(t_min, t_max),
                **_estimate(line, t_min, t_max),
                "bound": line["bound"],
                "bound_text": bound_text(line),
                "critical": critical_text(line["critical_min"], line["critical_max"]),
                "critical_min": None
                if pd.isna(line["critical_min"])
                else int(line["critical_min"]),
                "not_fitting": int(line["not_fitting"]),
                "fits": fits_text(int(line["not_fitting"]), int(line["scenarios"])),
            }
        )
    return rows


def _estimate(line: Mapping, t_min: float, t_max: float) -> dict:
    """A calibrated run's estimate beside the floor: 'floor → estimate' (`1.01 ms → 1.43
    ms`; over a sweep, each a range); nothing without a calibration, and the floor alone
    where the series' chip and op kind have no fitted group."""
    if "e_min" not in line:
        return {}
    e_min, e_max = float(line["e_min"]), float(line["e_max"])
    if not np.isfinite(e_max):
        return {"estimate": "", "floor_estimate": time_text(t_min, t_max) + " (not calibrated)"}
    estimate = time_text(e_min, e_max)
    return {"estimate": estimate, "floor_estimate": f"{time_text(t_min, t_max)} → {estimate}"}


def calibration_sentence(calibration) -> str | None:
    """Which calibration a run applied and how far off it is, in one sentence (None without
    one): 'Times are floor → estimate: calibration cal.toml 1a2b (2026-11-25, fitted to
    meas.csv): held-out error 2.5% (the floor's 47%); h100 custom not calibrated.'"""
    if not calibration:
        return None
    source = Path(calibration["source"]).name if calibration["source"] else "its measurements"
    unfitted = calibration["unfitted"]
    if not calibration["groups"]:  # nothing fitted: the times are the floor's alone
        return (
            f"No estimate: calibration {calibration['label']} ({calibration['created']}, "
            f"fitted to {source}) fits no chip and op kind ({', '.join(unfitted) or 'none'}: "
            "too few rows or too little spread), so the times are the roofline's floor "
            "(t_lower)."
        )
    return (
        f"Times are floor → estimate: the roofline's floor (t_lower), then t_estimate with "
        f"calibration {calibration['label']} ({calibration['created']}, fitted to {source}): "
        f"held-out error {fmt.percent(calibration['heldout_error'])} (the floor's "
        f"{fmt.percent(calibration['error_before'])})"
        + (f"; not calibrated: {', '.join(unfitted)}" if unfitted else "")
        + ". Errors are the mean |time / measured - 1|."
    )


def differing(rows: list[dict]) -> list[str]:
    """The columns of DEFAULTS (dtype, chips) in which some of the series `rows` differs from
    the default (bf16, one chip): the only ones worth a column."""
    return [c for c, default in DEFAULTS.items() if any(r[c] != default for r in rows)]


def time_text(t_min: float, t_max: float) -> str:
    """One time, or the range over a sweep."""
    if not np.isfinite(t_min):
        return fmt.seconds(t_max)
    return fmt.span(t_min, t_max, fmt.seconds)


def bound_text(line: Mapping) -> str:
    """'compute', or where a sweep changes: 'memory below B = 137, compute from B = 137'."""
    if line["bound"] != MIXED:
        return str(line["bound"])
    if line["change_dim"]:
        d, at = line["change_dim"], fmt.count(int(line["change_at"]))
        below = "memory" if line["memory"] >= line["network"] else "network"
        return f"{below} below {d} = {at}, compute from {d} = {at}"
    counts = [f"{fmt.count(int(line[b]))} {b}" for b in BOUNDS]
    return "mixed: " + ", ".join(c for c in counts if not c.startswith("0 "))


def critical_text(low, high) -> str:
    """The critical batch (model.roofline.CRITICAL_BATCH), or its range."""
    if pd.isna(low):
        return ""
    return fmt.span(int(low), int(high))


def fits_text(not_fitting: int, scenarios: int) -> str:
    if not not_fitting:
        return "yes"
    if not_fitting == scenarios:
        return "no"
    return f"{fmt.count(not_fitting)} of {fmt.count(scenarios)} do not"


def shape_text(shape: str, line: Mapping) -> str:
    """A collective's shape is its size, V (a range over a message-size sweep)."""
    if shape or pd.isna(line["bytes_min"]):
        return shape
    low, high = float(line["bytes_min"]), float(line["bytes_max"])
    return f"V = {fmt.span(low, high, fmt.size)}"


def _custom_sizes(results: pd.DataFrame, series) -> dict[str, str]:
    """A custom op's shape is the FLOPs and HBM bytes it was given: '1.00 TFLOP, 1.00 MB'
    (their range over the series: model.shapes.series_sizes)."""
    if not len(series):
        return {}
    sizes = series_sizes(results, series)
    return {
        str(name): ", ".join(
            fmt.span(sizes.at[name, f"{c}_min"], sizes.at[name, f"{c}_max"], f)
            for c, f in (("flops", fmt.flops), ("hbm_bytes", fmt.size))
        )
        for name in sizes.index
    }
