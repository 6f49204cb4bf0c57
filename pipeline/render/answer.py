"""The answer first, in words: the run's bottom line and one line per series (how long, bound
by what, does it fit), worded once here from the model's series table (Summary.lines) for
every output a person reads: the report's top, the workbook's first sheet, the notebook."""

from __future__ import annotations

from collections.abc import Mapping

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
