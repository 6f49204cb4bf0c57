"""The traps in chip figures, as checks that return problems: a sparse peak taken for a dense
one (x2), GiB taken for GB (+7 %), a bidirectional link figure taken for one-way (x2), a peak
for units the chip does not have, a unit slip (x1000) in a peak or a bandwidth, a link without
a reach, a system's power taken for one chip's. The shipped catalog's tests run them over
every chip (and check each figure against its sources row, pipeline/data/sources/); a user's
hardware file gets the same checks as warnings (docs/model.md#the-hardware-catalog)."""

from __future__ import annotations

import math
import re

import pandas as pd

from pipeline.catalogs.spellings import alias_map
from pipeline.errors import quoted
from pipeline.model.dtypes import PEAK_FAMILIES

# The peak_<dtype> families each architecture has hardware (matrix or vector units) for:
# - TPUs v3 to v6e: bf16 and int8, the two columns How to Scale Your Model (Part 2, TPUs, spec
#   table) prints for them; tpu7x: bf16 and fp8 (Google Cloud TPU7x (Ironwood) documentation,
#   "FP8 4614 TFLOPs"; the book's int8 column for TPU7x holds that fp8 figure).
# - NVIDIA (datasheets): ampere (A100) tf32, bf16, fp16, int8, int4, no fp8, no fp4; hopper
#   (H100, H200, H20, GH200) adds fp8, drops int4; ada (L40S) fp8, int8, int4, no fp4;
#   blackwell (B200, GB200) and blackwell-ultra (B300, GB300) fp4, fp8, int8. fp32 on CUDA cores.
# - AMD (Instinct datasheets): cdna3 (MI300X, MI325X) tf32, fp8, int8, no fp4; cdna4 (MI355X)
#   fp4 (and fp6), fp8, int8, int4, no tf32 (the CDNA 4 whitepaper: emulated with bf16).
# - Intel Gaudi 3 white paper: the MME's fp8 and bf16 (also fp32, tf32, fp16); no int8, no fp4.
_GPU = ("fp32", "tf32", "bf16", "fp16")
UNITS: dict[str, frozenset[str]] = {
    **{tpu: frozenset({"bf16", "int8"}) for tpu in ("tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p")},
    "tpu-v6e": frozenset({"bf16", "int8"}),
    "tpu7x": frozenset({"bf16", "fp8"}),
    "ampere": frozenset({*_GPU, "int8", "int4"}),
    "hopper": frozenset({*_GPU, "fp8", "int8"}),
    "ada": frozenset({*_GPU, "fp8", "int8", "int4"}),
    "blackwell": frozenset({*_GPU, "fp8", "int8", "fp4"}),
    "blackwell-ultra": frozenset({*_GPU, "fp8", "int8", "fp4"}),
    "cdna3": frozenset({*_GPU, "fp8", "int8"}),
    "cdna4": frozenset({"fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"}),
    "gaudi3": frozenset({*_GPU, "fp8"}),
}

# The sane ridge point (peak / hbm_bandwidth, FLOP/byte) per dtype family: the real fleet runs
# from about 9 (B200 fp32) to 110 (L40S fp32), 18 (H20 tf32) to 210 (L40S tf32), 37 (H20 bf16)
# to 580 (v6e bf16), 74 (H20 fp8) to 850 (L40S fp8), 40 (B300 int8) to 1150 (v6e int8), 1100
# (B200 fp4) to 1900 (B300 fp4). Each range holds its family and leaves out the same figures
# a thousand times larger or smaller (a TFLOP/s figure stored as GFLOP/s, GB/s as TB/s).
RIDGE_RANGE: dict[str, tuple[float, float]] = {
    "fp32": (1.0, 2000.0),
    "tf32": (2.0, 5000.0),
    "bf16": (5.0, 10000.0),
    "fp16": (5.0, 10000.0),
    "fp8": (10.0, 20000.0),
    "int8": (5.0, 20000.0),
    "int4": (10.0, 40000.0),
    "fp4": (100.0, 50000.0),
}
# One chip's board power (W): the fleet runs from 350 (L40S) to 1,400 (MI355X, GB300); a
# GB200 superchip (two GPUs and a CPU) is 2,700. A whole system's (DGX H100: 10.2 kW for 8
# GPUs) or a kW figure taken for W falls outside; so would an edge chip under 10 W.
TDP_RANGE = (10.0, 5000.0)
TOLERANCE = 0.005  # a catalog value and its sources row agree within 0.5 %
# a figure off the one it should be by a factor: which trap it looks like (pattern, factor,
# tolerance, relation, what the reference is, the question); vendors round a figure and its
# double on their own, but GiB for GB is the same 1.0737 every time (192/180 GB is not it)
TRAPS = (
    ("peak_.+", 2.0, 0.02, "twice", "dense figure", "a sparse figure?"),
    ("(?!hbm).+_bandwidth", 2.0, 0.02, "twice", "one-way figure", "a bidirectional figure? "
     "the catalog keeps one-way"),
    ("hbm_capacity", 2.0**30 / 1e9, TOLERANCE, "1.0737 x", "capacity", "GiB? vendors print "
     "decimal GB"),
)  # fmt: skip


def unit_problems(name: str, row: pd.Series, fields: tuple[str, ...] | None = None) -> list[str]:
    """Chip `name` has a known architecture, and peaks (those in `fields`, default all; all
    when the architecture is among them) only for dtype families it has units for (UNITS)."""
    arch = str(row.get("architecture", "")).strip().lower()
    if arch not in UNITS:
        said = f"architecture {quoted(arch)} is unknown" if arch else "no architecture"
        known = ", ".join(UNITS)
        return [f"{name}: {said}; give one of {known} (it says which dtypes the chip has)"]
    every = fields is None or "architecture" in fields
    problems = []
    for family in PEAK_FAMILIES:
        field = f"peak_{family}"
        if field not in row.index or _blank(row[field]) or family in UNITS[arch]:
            continue
        if every or field in fields:
            has = ", ".join(f for f in PEAK_FAMILIES if f in UNITS[arch])
            problems.append(
                f"{field} = {_num(row[field])} on {name}: {arch} has no {family} units (it has "
                f"{has}); leave {field} blank"
            )
    return problems


def ridge_problems(name: str, row: pd.Series, fields: tuple[str, ...] | None = None) -> list[str]:
    """Each peak / hbm_bandwidth of chip `name` (peaks in `fields`, default all; all when
    hbm_bandwidth is among them) within RIDGE_RANGE for its family: no unit slip."""
    bandwidth = row.get("hbm_bandwidth")
    if _blank(bandwidth):
        return []
    every = fields is None or "hbm_bandwidth" in fields
    problems = []
    for family, (low, high) in RIDGE_RANGE.items():
        field = f"peak_{family}"
        if field not in row.index or _blank(row[field]) or not (every or field in fields):
            continue
        ridge = float(row[field]) / float(bandwidth)
        if not low <= ridge <= high:
            problems.append(
                f"{field} / hbm_bandwidth = {_num(row[field])} / {_num(bandwidth)} = "
                f"{_num(ridge)} FLOP/byte on {name}, outside {_num(low)} to {_num(high)} for "
                f"{family}: a unit slip? (FLOP/s and bytes/s, SI)"
            )
    return problems


def reach_problems(
    name: str, row: pd.Series, fields: tuple[str, ...] | None = None, blank_ok: bool = False
) -> list[str]:
    """Each reach of chip `name` (the largest group of chips a link connects) is a whole number
    of chips, at least 2; a link with a bandwidth has one, blank only for dcn (no limit) or
    anywhere with `blank_ok`. Only the reaches in `fields`, when given."""
    problems = []
    for field in row.index:
        if not str(field).endswith("_reach") or (fields is not None and field not in fields):
            continue
        link = str(field).removesuffix("_reach")
        column, reach = f"{link}_bandwidth", row[field]
        if _blank(reach):
            if not blank_ok and link != "dcn" and not _blank(row.get(column)):
                problems.append(
                    f"{name}: {column} but no {field}; give the largest group of chips the "
                    "link connects (blank only for dcn: no limit)"
                )
        elif reach < 2 or reach != int(reach):
            problems.append(
                f"{field} = {_num(reach)} on {name}: a link connects a whole number of chips, "
                "at least 2 (blank: no limit)"
            )
    return problems


def power_problems(name: str, row: pd.Series, fields: tuple[str, ...] | None = None) -> list[str]:
    """Chip `name`'s board power (tdp, when in `fields` or no fields given) within TDP_RANGE:
    one chip's, not a system's, in W (blank: the vendor prints none, no problem)."""
    tdp = row.get("tdp")
    if _blank(tdp) or (fields is not None and "tdp" not in fields):
        return []
    low, high = TDP_RANGE
    if low <= float(tdp) <= high:
        return []
    return [
        f"tdp = {_num(tdp)} W on {name}, outside {_num(low)} to {_num(high)} W for one chip's "
        "board: a whole system's power (an 8-GPU box), or kW taken for W?"
    ]


def user_chip_warnings(
    user: pd.DataFrame, catalog_chips: pd.DataFrame, where: dict[str, str]
) -> list[str]:
    """Doubts about the chips a user file adds or overrides (`user`: by name, blank fields NaN
    or ''), each at its FILE:LINE (`where`): the figures compared with the catalog chip of the
    same name or alias, else the one whose name is the longest prefix of the user's (sparse?
    bidirectional? GiB?), then the catalog's own checks (units, ridge points, reach, board
    power)."""
    names = alias_map(catalog_chips.index, catalog_chips["aliases"])
    warnings = []
    for key, user_row in user.iterrows():  # a handful of chips
        name = str(key)
        given = {str(k): v for k, v in user_row.items() if not _blank(v)}
        target = names.get(name)
        ref_name = target or _longest_prefix(name, names)
        ref = catalog_chips.loc[ref_name] if ref_name else None
        row = catalog_chips.loc[target].copy() if target else user_row.copy()
        for field, value in given.items():
            row[field] = value
        fields = tuple(given)
        problems = _compared(name, given, ref_name, ref)
        if _blank(row.get("architecture")) and ref is not None:
            row["architecture"] = ref["architecture"]
        if not _blank(row.get("architecture")):
            problems += unit_problems(name, row, fields)
        problems += ridge_problems(name, row, fields)
        problems += reach_problems(name, row, fields, blank_ok=True)
        problems += power_problems(name, row, fields)
        warnings += [f"{where.get(name, name)}: {p}" for p in problems]
    return warnings


def _compared(name: str, given: dict, ref_name: str | None, ref: pd.Series | None) -> list[str]:
    """The user's figures against the catalog chip `ref` (TRAPS: a peak twice its dense one, a
    link twice its one-way one, a capacity 1.0737 x its own), and a whole number of GiB."""
    out = []
    for field, value in given.items():
        if isinstance(value, str):  # a name, an architecture: not a figure
            continue
        value = float(value)
        theirs = None if ref is None or _blank(ref.get(field)) else float(ref[field])
        if value == theirs:  # the catalog's own figure (its tests check it against its source)
            continue
        said = f"{field} = {_num(value)} on {name}"
        if field == "hbm_capacity" and value % 2**30 == 0:
            gib = value / 2**30
            out.append(
                f"{said} is exactly {_num(gib)} GiB: GiB? vendors print decimal GB "
                f"({_num(gib)} GB = {_num(gib * 1e9)} bytes)"
            )
            continue
        trap = _trap(field, value / theirs) if theirs else None
        if trap:
            relation, what, question = trap
            out.append(
                f"{said} is {relation} the catalog's {what} for {ref_name} ({_num(theirs)}): "
                f"{question}"
            )
    return out


def _longest_prefix(name: str, spellings: dict[str, str]) -> str | None:
    """The chip whose name or alias is the longest prefix of `name` (h100-custom -> h100)."""
    prefixes = [s for s in spellings if name.startswith(s)]
    return spellings[max(prefixes, key=len)] if prefixes else None


def _trap(field: str, ratio: float) -> tuple[str, str, str] | None:
    """The trap (TRAPS) a figure `ratio` x the one it should be looks like, or None."""
    for pattern, factor, tolerance, relation, what, question in TRAPS:
        if re.fullmatch(pattern, field) and math.isclose(ratio, factor, rel_tol=tolerance):
            return relation, what, question
    return None


def _blank(value: object) -> bool:
    """None, NaN or an empty text: a field left blank."""
    text = isinstance(value, str) and not value.strip()
    return value is None or text or (isinstance(value, float) and math.isnan(value))


def _num(value: object) -> str:
    """A number in a message: 4 significant digits, exponents as the catalog writes them."""
    text = f"{float(value):.4g}"
    return re.sub(r"e\+?(-?)0*(\d)", r"e\1\2", text)
