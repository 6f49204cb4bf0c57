"""The hardware catalog as terminal text (`pipeline hardware [NAME]`): the list, one chip a
line; one chip's every field with its unit (format.py) or as stored (`--raw`), then each
field's source (catalogs/sources.py); and chips side by side (`--compare`, catalogs/chips.py)."""

from __future__ import annotations

import textwrap

import pandas as pd

from pipeline.catalogs.sources import BASES
from pipeline.errors import printable
from pipeline.i18n import _
from pipeline.render import format as fmt

KEY_WIDTH = 17  # the field column: the shipped chips' longest field name and a space


def catalog_lines(chips: pd.DataFrame, version: str) -> list[str]:
    """The catalog, one chip a line: bf16 peak, HBM bandwidth and size, board power (a dash
    where its vendor prints none), default link."""
    lines = [
        f"{'name':<9} {'aliases':<28} {'bf16 TFLOP/s':>12} {'HBM GB/s':>9} {'HBM GB':>7}"
        f" {'TDP':>7}  default link (one-way)"
    ]
    for chip, row in chips.iterrows():  # a dozen chips
        aliases = printable(row["aliases"].replace(";", ", "))
        aliases = aliases[:27] + "…" if len(aliases) > 28 else aliases
        link = row["default_link"]
        bw = row.get(f"{link}_bandwidth") if link else None
        bf16 = fmt.fixed(row["peak_bf16"], 1e12, 1) if row["peak_bf16"] > 0 else "-"
        capacity = fmt.fixed(row["hbm_capacity"], 1e9) if row["hbm_capacity"] > 0 else "-"
        tdp = f"{fmt.fixed(row['tdp'])} W" if row.get("tdp", 0) > 0 else fmt.DASH
        lines.append(
            f"{printable(chip):<9} {aliases:<28} {bf16:>12} "
            f"{fmt.fixed(row['hbm_bandwidth'], 1e9):>9} {capacity:>7} {tdp:>7}  {link} "
            f"{fmt.fixed(bw if bw and bw > 0 else 0, 1e9)} GB/s"
        )
    lines.append(
        _("catalog version {version}; `pipeline hardware NAME` shows sources", version=version)
    )
    return lines


def chip_lines(name: str, row: pd.Series, raw: bool = False) -> list[str]:
    """Every field of one chip that has a value, a line each: with its unit (the source text
    wrapped under its column), or as stored."""
    fields = {k: v for k, v in row.items() if not _blank(v)}
    width = max(KEY_WIDTH, *(len(k) + 1 for k in fields))
    lines = [f"{'name':<{width}} {printable(name)}"]
    for key, value in fields.items():
        text = printable(value if raw else with_unit(key, value))
        if key == "source" and not raw:  # a paragraph: wrapped under its own column
            wrap = textwrap.wrap(text, SOURCE_WIDTH - width - 1, break_on_hyphens=False)
            head, *rest = wrap or [text]
            lines.append(f"{key:<{width}} {head}")
            lines += [f"{'':<{width}} {part}" for part in rest]
            continue
        lines.append(f"{key:<{width}} {text}")
    return lines


def with_unit(key: str, value):
    """A catalog field as people read it: FLOP/s, bytes/s, bytes, seconds and watts with an
    SI prefix, efficiencies in %; text as it is (aliases comma-separated)."""
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
    if key == "tdp":
        return fmt.with_prefix(value, "W")
    return value


SOURCE_WIDTH = 100  # characters a wrapped source text fills, its indent included
SOURCE_INDENT = 6


def source_lines(sources: pd.DataFrame, order: list[str], overridden=frozenset()) -> list[str]:
    """A chip's per-field sources (catalogs/sources.py chip_sources: field, printed, basis,
    source, as_of; `per` too when given) after its fields: a line per field with its figure as
    printed, its basis, what the catalog divides it by (÷ 2 for a sparse or bidirectional
    figure, ÷ 8 for an 8-GPU total) and its date, grouped by source text, each text wrapped
    once below its fields. Fields in `order` (the chip's field order); an `overridden` field
    (a user's file set it) is said to be no longer the printed figure's."""
    if sources.empty:
        return []
    rank = {field: i for i, field in enumerate(order)}
    rows = sources.assign(_rank=sources["field"].map(rank).fillna(len(rank)))
    rows = rows.sort_values("_rank", kind="stable")
    per = rows["per"] if "per" in rows else pd.Series(1.0, index=rows.index)
    halved = rows["basis"].map(lambda b: BASES.get(b) or 1.0)
    divisor = [f"\u00f7 {d:g}" if d != 1 else "" for d in per.fillna(1.0) * halved]
    rows = rows.assign(divide=divisor)
    key = max(KEY_WIDTH, *(len(f) + 1 for f in rows["field"]))
    widths = {c: max(len(printable(v)) for v in rows[c]) for c in ("printed", "basis", "divide")}
    widths = {c: w for c, w in widths.items() if w}  # no divisor column when nothing is divided
    lines = [
        _("sources (each figure as printed, its basis, what the catalog divides it by, date):")
    ]
    for source, group in rows.groupby("source", sort=False):  # texts, first-cited first
        for r in group.itertuples():
            mark = _("  (overridden by a --hardware file)") if r.field in overridden else ""
            cells = [f"{printable(getattr(r, c)):<{w}}" for c, w in widths.items()]
            lines.append(
                f"  {printable(r.field):<{key}}{'  '.join(cells)}  {printable(r.as_of)}{mark}"
            )
        lines += textwrap.wrap(
            printable(source),
            SOURCE_WIDTH,
            initial_indent=" " * SOURCE_INDENT,
            subsequent_indent=" " * SOURCE_INDENT,
            break_long_words=False,  # a URL stays whole, to copy
            break_on_hyphens=False,
        )
    return lines


# the side-by-side table's rows: label and (unit, scale) for numbers, None for text/counts
_COMPARED = {
    "vendor": ("vendor", None),
    "architecture": ("architecture", None),
    "hbm_capacity": ("HBM capacity", ("GB", 1e9)),
    "hbm_bandwidth": ("HBM bandwidth", ("GB/s", 1e9)),
    "tdp": ("board power", ("W", 1.0)),
    "peak": ("peak {} ", ("TFLOP/s", 1e12)),
    "ridge": ("ridge {} ", ("FLOP/byte", 1.0)),
    "default_link": ("default link", None),
    "link_bandwidth": ("link one-way", ("GB/s", 1e9)),
    "link_topology": ("link topology", None),
    "link_latency": ("link latency", ("\u00b5s", 1e-6)),
    "link_reach": ("link reach", ("chips", 1.0)),
    "as_of": ("as of", None),
}
BLANK = "-"  # a field a chip has no value for


def compare_lines(table: pd.DataFrame, raw: bool = False) -> list[str]:
    """The side-by-side table (fields as rows, a column per chip) as aligned text: each
    number in its row's unit (TFLOP/s, GB/s, GB, µs), or as stored (`raw`); blanks as '-'."""
    labels, cells = compare_cells(table, raw)
    head = [printable(c) for c in table.columns]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(head)]
    key = max(len(x) for x in [*labels, "chip"])
    lines = [f"{'chip':<{key}}" + "".join(f"  {h:>{w}}" for h, w in zip(head, widths, strict=True))]
    for label, row in zip(labels, cells, strict=True):
        shown = "".join(f"  {c:>{w}}" for c, w in zip(row, widths, strict=True))
        lines.append(f"{label:<{key}}{shown}")
    return lines


def compare_cells(table: pd.DataFrame, raw: bool = False) -> tuple[list[str], list[list[str]]]:
    """The side-by-side table's row labels with their units (`HBM bandwidth (GB/s)`) and
    its cells as text in those units (compare_lines; a notebook's table shows the same)."""
    labels, cells = [], []
    for field, values in table.iterrows():  # two dozen rows
        label, unit = _compared(str(field))
        labels.append(str(field) if raw else label)
        cells.append([_cell(v, None if raw else unit, field) for v in values])
    return labels, cells


def chips_html(table: pd.DataFrame) -> str:
    """The side-by-side table as an HTML table for a notebook: the rows of compare_lines,
    each number in its row's unit, text escaped."""
    labels, cells = compare_cells(table)
    shown = pd.DataFrame(cells, index=labels, columns=pd.Index(table.columns, name="chip"))
    return shown.to_html(escape=True, classes="pipeline-chips")


def _compared(field: str) -> tuple[str, tuple[str, float] | None]:
    """A row's label with its unit, and the unit and its scale (None: shown as it is)."""
    kind, _, dtype = field.partition("_")
    label, unit = _COMPARED.get(field) or _COMPARED.get(kind) or (field, None)
    label = label.format(dtype).rstrip()
    return (f"{label} ({unit[0]})" if unit else label), unit


def _cell(value, unit: tuple[str, float] | None, field) -> str:
    if _blank(value):
        return BLANK
    if unit is None or isinstance(value, str):
        return printable(value)
    if field == "link_reach":
        return fmt.count(value)
    return fmt.number(float(value) / unit[1])


def _blank(value) -> bool:
    return value is None or value == "" or fmt.missing(value)
