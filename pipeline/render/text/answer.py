"""The answer first, in words: the run's bottom line and one line per series (how long, bound
by what, does it fit), worded once here from the model's series table (Summary.lines) for
every output a person reads: the report's top, the workbook's first sheet, the notebook."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.summary.turns import MIXED


def meaning() -> dict[str, str]:
    """What each bound means to someone deciding what to buy or change (said where it
    appears), in the current language."""
    return {
        "compute": _("compute-bound: more FLOP/s helps; faster HBM does not"),
        "memory": _("memory-bound: faster HBM helps; more FLOP/s does not (a bigger batch may)"),
        "network": _("network-bound: a faster link, or less data between chips, helps"),
        MIXED: _("changes along the sweep: see where"),
    }


def bound_word(bound: str) -> str:
    """A bound of the data ('compute', 'memory', 'network', 'mixed': English in the data)
    as shown in the current language."""
    words = {"compute": _("compute"), "memory": _("memory"), "network": _("network")}
    return words.get(bound) or (_("mixed") if bound == MIXED else str(bound))


def bound_label(bound: str) -> str:
    """'memory-bound' for the data's 'memory', in the current language."""
    labels = {"compute": _("compute-bound"), "memory": _("memory-bound")}
    labels["network"] = _("network-bound")
    return labels.get(bound, f"{bound}-bound")


def critical_batch_term() -> str:
    """model.roofline.CRITICAL_BATCH, the term's definition, in the current language."""
    return _("the smallest batch at which the op is compute-bound, everything else fixed")


SERIES_ROWS = 50  # series lines shown first (report top, workbook first sheet, notebook)
# a series' dtypes and chip counts (Summary.lines): a column shown only when a series differs
DEFAULTS = {"dtype": "bf16", "chips": "1"}


def bound_count(bound: str, n) -> str:
    """'3 compute-bound': `n` scenarios or series of `bound`."""
    n = fmt.count(n)
    if bound == "compute":
        return _("{n} compute-bound", n=n)
    if bound == "memory":
        return _("{n} memory-bound", n=n)
    return _("{n} network-bound", n=n)


def scenarios_text(n: int) -> str:
    """'1 scenario', '1,035 scenarios'."""
    return fmt.counted(n, _("{n} scenario"), _("{n} scenarios"))


def bottom_line(bottom: Mapping) -> str:
    """The run in one or two plain sentences: series and scenarios, what bounds them, the
    slowest, whether everything fits."""
    if not bottom.get("series"):
        return _("No scenario was computed: every row was rejected (see the errors).")
    bounds = bottom["bounds"]
    parts = [bound_count(b, bounds[b]) for b in BOUNDS if bounds[b]]
    if bounds.get(MIXED):
        turning = bottom["changing"]
        n = fmt.count(bounds[MIXED])
        parts.append(
            _(
                "{n} change along their sweep ({turning} turn compute-bound as the batch grows)",
                n=n,
                turning=fmt.count(turning),
            )
            if turning
            else _("{n} change along their sweep", n=n)
        )
    chips = bottom["chips"]
    head = _(
        "{series} series ({scenarios}) on {chips}: {parts}.",
        series=fmt.count(bottom["series"]),
        scenarios=scenarios_text(bottom["scenarios"]),
        chips=fmt.counted(chips, _("{n} chip"), _("{n} chips")),
        parts=", ".join(parts),
    )
    slowest = ""
    if bottom.get("slowest") is not None:
        slowest = " " + _(
            "Slowest: {name}, {time}.",
            name=bottom["slowest"],
            time=fmt.seconds(bottom["slowest_time"]),
        )
    unfit = bottom["not_fitting"]
    if not unfit:
        fits = _("Everything fits in HBM.")
    elif unfit == 1:
        fits = _("{n} series does not fit in HBM.", n=fmt.count(unfit))
    else:
        fits = _("{n} series do not fit in HBM.", n=fmt.count(unfit))
    return head + slowest + " " + fits


def series_rows(record: Record, limit: int = SERIES_ROWS) -> list[dict]:
    """The first `limit` series as plain records: the numbers (SI) and their words."""
    lines = record.summary.lines.head(limit)
    if lines.empty:
        return []
    rows = []
    for name, line in lines.iterrows():  # at most `limit` series: a table, not the rows
        t_min, t_max = float(line["t_min"]), float(line["t_max"])
        rows.append(
            {
                "series": str(name),
                "hardware": line["hardware"],
                "op": line["op"],
                "shape": shape_text(line),
                "dtype": str(line["dtype"]),
                "chips": str(line["chips"]),
                "scenarios": int(line["scenarios"]),
                "t_min": t_min,
                "t_max": t_max,
                **_measured(
                    line, {"time": time_text(t_min, t_max), **_estimate(line, t_min, t_max)}
                ),
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
        return {
            "estimate": "",
            "floor_estimate": _("{time} (not calibrated)", time=time_text(t_min, t_max)),
        }
    estimate = time_text(e_min, e_max)
    return {"estimate": estimate, "floor_estimate": f"{time_text(t_min, t_max)} → {estimate}"}


def _measured(line: Mapping, times: dict) -> dict:
    """A series with measured rows: its time texts followed by the measured time ('2.50 ms
    → 3.41 ms; measured 4.06 ms'), so that each line sets measured beside floor and
    estimate; `times` unchanged without one."""
    m_max = float(line["m_max"]) if "m_max" in line else float("nan")
    if not np.isfinite(m_max):
        return times
    measured = time_text(float(line["m_min"]), m_max)
    return {k: (_("{time}; measured {measured}", time=v, measured=measured) if k != "estimate"
                else v) for k, v in times.items()}  # fmt: skip


def _source_name(source: str) -> str:
    """What a calibration was fitted to, short: a file's name, or a repository's address and
    commit (the published calibration's source is an address, not a path)."""
    if "://" in source:
        return source.split(" (", 1)[0].split("://", 1)[1]
    return Path(source).name if source else ""


def calibration_sentence(calibration) -> str | None:
    """Which calibration a run applied and how far off it is, in one sentence (None without
    one): 'Times are floor → estimate: calibration cal.toml 1a2b (2026-11-25, fitted to
    meas.csv): error 2.5% / 9.0% held out (the floor's 47% / 250%), median / p90; not used:
    h100 custom (every dtype). ...'"""
    if not calibration:
        return None
    source = _source_name(calibration["source"]) or _("its measurements")
    unfitted = calibration["unfitted"]
    values = {"label": calibration["label"], "created": calibration["created"], "source": source}
    if calibration["groups"] and not calibration.get("estimated", True):
        return _(
            "No estimate: calibration {label} ({created}, fitted to {source}) fits none of this "
            "run's chips and op kinds (it fits {fitted}), so the times are the roofline's floor "
            "(t_lower).",
            fitted=", ".join(
                " ".join(
                    str(g[k]) for k in ("hardware", "kind", "dtype", "link", "chips") if g.get(k)
                )
                for g in calibration["groups"]
            ),
            **values,
        )
    if not calibration["groups"]:  # nothing fitted: the times are the floor's alone
        return _(
            "No estimate: calibration {label} ({created}, fitted to {source}) fits no chip and "
            "op kind ({unfitted}: too few rows or too little spread), so the times are the "
            "roofline's floor (t_lower).",
            unfitted=", ".join(unfitted) or _("none"),
            **values,
        )
    for key, which in (("error", "heldout_"), ("before", "floor_")):  # median / p90
        values[key] = " / ".join(fmt.percent(calibration[which + q]) for q in ("median", "p90"))
    if unfitted:
        return _(
            "Times are floor → estimate: the roofline's floor (t_lower), then t_estimate with "
            "calibration {label} ({created}, fitted to {source}): error {error} held out (the "
            "floor's {before}), median / p90; not used: {unfitted}. The error is "
            "max(time / measured, measured / time) - 1.",
            unfitted=", ".join(unfitted),
            **values,
        )
    return _(
        "Times are floor → estimate: the roofline's floor (t_lower), then t_estimate with "
        "calibration {label} ({created}, fitted to {source}): error {error} held out (the "
        "floor's {before}), median / p90. The error is max(time / measured, measured / time) "
        "- 1.",
        **values,
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
        return bound_word(line["bound"])
    if line["change_dim"]:
        d, at = line["change_dim"], fmt.count(int(line["change_at"]))
        if line["memory"] >= line["network"]:
            return _("memory below {dim} = {at}, compute from {dim} = {at}", dim=d, at=at)
        return _("network below {dim} = {at}, compute from {dim} = {at}", dim=d, at=at)
    counts = [
        _("{n} {bound}", n=fmt.count(int(line[b])), bound=bound_word(b))
        for b in BOUNDS
        if int(line[b])
    ]
    return _("mixed: {counts}", counts=", ".join(counts))


def critical_text(low, high) -> str:
    """The critical batch (model.roofline.CRITICAL_BATCH), or its range."""
    if pd.isna(low):
        return ""
    return fmt.span(int(low), int(high))


def fits_text(not_fitting: int, scenarios: int) -> str:
    if not not_fitting:
        return _("yes")
    if not_fitting == scenarios:
        return _("no")
    return _("{n} of {total} do not", n=fmt.count(not_fitting), total=fmt.count(scenarios))


def shape_text(line: Mapping, sizes: bool = True) -> str:
    """A series' shape over its whole run (Summary.lines): its dims' ranges; a collective's
    is its size, V (a range over a message-size sweep); with `sizes`, a custom op's the FLOPs
    and HBM bytes it was given, '1.00 TFLOP, 1.00 MB' (their ranges over the series)."""
    if line["shape"]:
        return str(line["shape"])
    if pd.notna(line["bytes_min"]):
        low, high = float(line["bytes_min"]), float(line["bytes_max"])
        return f"V = {fmt.span(low, high, fmt.size)}"
    if sizes and pd.notna(line["flops_min"]):
        return ", ".join(
            fmt.span(float(line[f"{c}_min"]), float(line[f"{c}_max"]), f)
            for c, f in (("flops", fmt.flops), ("hbm_bytes", fmt.size))
        )
    return ""
