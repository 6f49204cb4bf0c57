"""What a fit says of its measurements and groups (calibrate's warnings): a measured unit
in doubt (unit_warnings), a fitted group not used (its held-out error does not beat the
floor's: unused_groups)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.calibration.estimate import EFFICIENCIES, Calibration
from pipeline.calibration.groups import KEYS, group_name, op_kinds

# a measurement's unit in doubt (unit_warnings): a group's median measured / t_lower past
# SLOW or a fitted efficiency under LOW (1 %), or its median under FAST (a tenth of the floor)
SLOW, LOW, FAST = 100.0, 0.01, 0.1
UNITS = (("nanoseconds", 1e9), ("microseconds", 1e6), ("milliseconds", 1e3))
TERMS = ("compute", "HBM", "network")  # EFFICIENCIES' terms as calibrate's lines say them


def fit_warnings(rows: pd.DataFrame, calibration: Calibration) -> tuple[str, ...]:
    """Every doubt of a fit: unit_warnings, then unused_groups."""
    return (*unit_warnings(rows, calibration), *unused_groups(calibration))


def unused_groups(calibration: Calibration) -> tuple[str, ...]:
    """One warning naming each fitted group that is not used, with its held-out and its
    floor's median error; none when every fitted group is used."""
    groups = calibration.groups
    idle = groups[groups["fitted"].to_numpy(dtype=bool) & ~groups["used"].to_numpy(dtype=bool)]
    if idle.empty:
        return ()
    said = "; ".join(
        f"{group_name(tuple(g[k] for k in KEYS))} (held out {g['heldout_median']:.1%}, the "
        f"floor {g['floor_median']:.1%})"
        for g in idle.to_dict("records")
    )
    return (
        f"{len(idle)} fitted group{'s' if len(idle) > 1 else ''} not used: the held-out median "
        f"error does not beat the floor's: {said}; no row gets its estimate from them",
    )


def unit_warnings(rows: pd.DataFrame, calibration: Calibration) -> tuple[str, ...]:
    """What the measurements' size says of their unit: a group (chip x kind) whose median
    measured / t_lower is past SLOW, or whose fit gives an efficiency under LOW, looks measured
    in milliseconds (or µs, ns: the largest unit that leaves the times above the floor); one
    whose median is under FAST is below the floor, which no measured time can be."""
    measured = rows["measured_seconds"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = measured / rows["t_lower"].to_numpy(dtype=float)
    usable = np.isfinite(ratio) & (ratio > 0)
    names = rows["hardware"].astype(str).to_numpy(dtype=object) + " " + op_kinds(rows)
    median = pd.Series(ratio[usable]).groupby(names[usable], sort=False).median()
    groups = calibration.groups
    fitted = groups[groups["fitted"].to_numpy(dtype=bool)]
    low = {}
    for g in fitted.to_dict("records"):  # a few chips x kinds
        under = [f"{w} {g[e] * 100:.2g} %" for w, e in zip(TERMS, EFFICIENCIES, strict=True)
                 if g[e] < LOW]  # fmt: skip
        if under:
            low[f"{g['hardware']} {g['kind']}"] = ", ".join(under)
    slow = [n for n in median.index if median[n] > SLOW or n in low]
    fast = [n for n in median.index if median[n] < FAST]
    said = []
    if slow:
        typical = float(np.median(ratio[usable & np.isin(names, slow)]))
        where = "; ".join(f"{n} {low[n]}" if n in low else n for n in slow)
        unit = next(((u, f) for u, f in UNITS if typical / f >= 1.0), None)
        what = f"a median {typical:,.0f}\u00d7 the roofline's floor ({where})"
        if unit is None:
            said.append(
                f"measured_seconds are far above the floor, {what}: are they in seconds, and "
                "each the time of its row's op (times its count)?"
            )
        else:
            said.append(
                f"measured_seconds look like {unit[0]}: {what}; measured_seconds is in "
                f"seconds: divide them by {unit[1]:,.0f}"
            )
    if fast:
        typical = float(np.median(ratio[usable & np.isin(names, fast)]))
        said.append(
            f"measured_seconds are far below the roofline's floor, which no measured time can "
            f"beat: a median {typical:.2g}\u00d7 it ({', '.join(fast)}); are they in seconds, "
            "and are the rows' chip and count the ones measured?"
        )
    return tuple(said)
