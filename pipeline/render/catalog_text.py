"""The hardware catalog as terminal text (`pipeline hardware [NAME]`): the list, one chip a
line, and one chip's every field with its unit (format.py) or as stored (`--raw`)."""

from __future__ import annotations

import pandas as pd

from pipeline.errors import printable
from pipeline.render import format as fmt

KEY_WIDTH = 17  # the field column: the shipped chips' longest field name and a space


def catalog_lines(chips: pd.DataFrame, version: str) -> list[str]:
    """The catalog, one chip a line: bf16 peak, HBM bandwidth and size, default link."""
    lines = [
        f"{'name':<9} {'aliases':<28} {'bf16 TFLOP/s':>12} {'HBM GB/s':>9} {'HBM GB':>7}"
        "  default link (one-way)"
    ]
    for chip, row in chips.iterrows():  # a dozen chips
        aliases = printable(row["aliases"].replace(";", ", "))
        aliases = aliases[:27] + "…" if len(aliases) > 28 else aliases
        link = row["default_link"]
        bw = row.get(f"{link}_bandwidth") if link else None
        bf16 = fmt.fixed(row["peak_bf16"], 1e12, 1) if row["peak_bf16"] > 0 else "-"
        capacity = fmt.fixed(row["hbm_capacity"], 1e9) if row["hbm_capacity"] > 0 else "-"
        lines.append(
            f"{printable(chip):<9} {aliases:<28} {bf16:>12} "
            f"{fmt.fixed(row['hbm_bandwidth'], 1e9):>9} {capacity:>7}  {link} "
            f"{fmt.fixed(bw if bw and bw > 0 else 0, 1e9)} GB/s"
        )
    lines.append(f"catalog version {version}; `pipeline hardware NAME` shows sources")
    return lines


def chip_lines(name: str, row: pd.Series, raw: bool = False) -> list[str]:
    """Every field of one chip that has a value, a line each: with its unit, or as stored."""
    fields = {k: v for k, v in row.items() if not _blank(v)}
    width = max(KEY_WIDTH, *(len(k) + 1 for k in fields))
    lines = [f"{'name':<{width}} {printable(name)}"]
    for key, value in fields.items():
        lines.append(f"{key:<{width}} {printable(value if raw else with_unit(key, value))}")
    return lines


def with_unit(key: str, value):
    """A catalog field as people read it: FLOP/s, bytes/s, bytes and seconds with an SI
    prefix, efficiencies in %; text as it is (aliases comma-separated)."""
    if key == "aliases":
        return str(value).replace(";", ", ")
    if isinstance(value, str):
        return value
    if key.startswith("peak_"):
        return fmt.flop_rate(value)
    if key.endswith("_bandwidth"):
        return fmt.bandwidth(value)
    if key.endswith("_latency"):
        return fmt.seconds(value)
    if key.endswith("_efficiency"):
        return fmt.percent(value)
    if key == "hbm_capacity":
        return fmt.size(value)
    return value


def _blank(value) -> bool:
    return value is None or value == "" or fmt.missing(value)
