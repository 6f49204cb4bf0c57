"""The HTML review report and the batch index page (DESIGN §7, issue 5).

One Jinja2 environment (autoescape, StrictUndefined) renders the templates of the top-level
`templates/` folder. The templates receive plain records and scalars built here from the
results frame; human formatting (ms, TFLOP/s, GB, %) happens only in the filters below. The
page is self-contained: inline CSS and JS, charts embedded as base64 PNG, no external URL. The
output depends only on its inputs (no clock, no random ids), so it can be diffed and golden-
tested.
"""

from __future__ import annotations

import base64
import functools
import math
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

import jinja2
import numpy as np
import pandas as pd

from pipeline.dtypes import DTYPES, PEAK_FAMILIES, wider_dtype
from pipeline.errors import OutputError, PipelineError
from pipeline.hardware import LINKS
from pipeline.limits import DEFAULT_TABLE_ROWS
from pipeline.meta import Chart, RunMeta

REPORT_TEMPLATE = "report.html.j2"
INDEX_TEMPLATE = "index.html.j2"
SLOWEST_ROWS = 10  # series listed in "slowest scenarios"
FINDING_ROWS = 20  # series listed per finding; its heading gives the full count
MEASURED_RANGE = (0.5, 2.0)  # measured / predicted outside this is called out
BOUNDS = ("compute", "memory", "network")
DASH = "\u2014"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
INDEX_KEYS = (
    "run_name",
    "input_path",
    "report_href",
    "scenarios",
    "compute",
    "memory",
    "network",
    "not_fitting",
    "rejected",
    "status",
)


# ---------------------------------------------------------------- filters


def _missing(value) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _three_digits(x: float) -> str:
    """A value in [1, 1000) (or below 1 for the smallest unit) with three significant digits."""
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _with_prefix(value, unit: str, prefixes: tuple[tuple[float, str], ...]) -> str:
    """`value` scaled to the largest prefix that keeps it >= 1, three significant digits."""
    if _missing(value):
        return DASH
    v = float(value)
    if math.isinf(v):
        return "\u221e" if v > 0 else "-\u221e"
    if v == 0:
        return f"0 {unit}"
    rounded = float(f"{abs(v):.3g}")  # round first so 999.7e9 becomes 1.00e12, not "1000 G"
    factor, prefix = next(((f, p) for f, p in prefixes if rounded >= f), prefixes[-1])
    sign = "-" if v < 0 else ""
    return f"{sign}{_three_digits(rounded / factor)} {prefix}{unit}"


_SI = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_SUB = ((1.0, ""), (1e-3, "m"), (1e-6, "\u00b5"), (1e-9, "n"), (1e-12, "p"))


def format_seconds(value) -> str:
    """Seconds for people: 1.011e-3 -> '1.01 ms' (s, ms, µs, ns, ps)."""
    return _with_prefix(value, "s", _SUB)


def format_flop_rate(value) -> str:
    """FLOP/s for people: 1.97e14 -> '197 TFLOP/s'."""
    return _with_prefix(value, "FLOP/s", _SI)


def format_flops(value) -> str:
    """A FLOP count for people: 2.06e12 -> '2.06 TFLOP'."""
    return _with_prefix(value, "FLOP", _SI)


def format_bytes(value) -> str:
    """Bytes for people, decimal units as the book uses them: 1.6e10 -> '16.0 GB'."""
    return _with_prefix(value, "B", _SI)


def format_bandwidth(value) -> str:
    """Bytes/s for people: 8.2e11 -> '820 GB/s'."""
    return _with_prefix(value, "B/s", _SI)


def format_percent(fraction) -> str:
    """A fraction as a percentage with one decimal: 0.4615 -> '46.2%' (0 and 1 without)."""
    if _missing(fraction):
        return DASH
    f = float(fraction)
    if f in (0.0, 1.0):
        return f"{f * 100:.0f}%"
    return f"{f * 100:.1f}%"


def format_number(value) -> str:
    """A plain quantity (intensity, FLOP/byte): 238.25 -> '238', 0.5 -> '0.500', 4377 -> '4,377'."""
    if _missing(value):
        return DASH
    v = float(value)
    if math.isinf(v):
        return "\u221e"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.{2 - math.floor(math.log10(a))}f}"


def format_count(value) -> str:
    """An integer count with thousands separators: 1035 -> '1,035'."""
    if _missing(value):
        return DASH
    return f"{int(value):,}"


def format_ratio(value) -> str:
    """A factor: 1.847 -> '1.85×'."""
    if _missing(value):
        return DASH
    return f"{format_number(value)}\u00d7"


def format_when(text: str) -> str:
    """An ISO 8601 timestamp as 'YYYY-MM-DD HH:MM:SS UTC' (other zones and text unchanged)."""
    try:
        when = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return text
    if when.utcoffset() is not None and when.utcoffset().total_seconds() == 0:
        return when.strftime("%Y-%m-%d %H:%M:%S UTC")
    return text


def sort_key(value) -> str:
    """A number as a compact `data-v` attribute for the table sorter; empty when missing."""
    if _missing(value):
        return ""
    return f"{float(value):.5g}"


FILTERS: dict[str, Callable] = {
    "seconds": format_seconds,
    "flop_rate": format_flop_rate,
    "flops": format_flops,
    "bytes": format_bytes,
    "bandwidth": format_bandwidth,
    "percent": format_percent,
    "num": format_number,
    "count": format_count,
    "ratio": format_ratio,
    "when": format_when,
    "sortkey": sort_key,
}


# ---------------------------------------------------------------- environment


def template_dirs() -> list[Path]:
    """Where templates are looked for, in order: `templates/` beside the package, then inside it.

    The first is the repository layout (and an editable install); the second is where an
    installed wheel carries them as package data.
    """
    package = Path(__file__).resolve().parent
    return [package.parent / "templates", package / "templates"]


def find_template_dir() -> Path:
    """The first template folder holding both templates; PipelineError when there is none."""
    for folder in template_dirs():
        if (folder / REPORT_TEMPLATE).is_file() and (folder / INDEX_TEMPLATE).is_file():
            return folder
    looked = ", ".join(str(d) for d in template_dirs())
    raise PipelineError(
        f"report templates not found (looked for {REPORT_TEMPLATE} and {INDEX_TEMPLATE} in "
        f"{looked}); reinstall roofline-pipeline, or run with --no-report"
    )


@functools.cache
def environment() -> jinja2.Environment:
    """The one Jinja2 environment: autoescape on, StrictUndefined, the formatting filters."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(find_template_dir()),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


# ---------------------------------------------------------------- records


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts of plain Python values, None for NaN/NA."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _anchor(index: int, name: str) -> str:
    """An HTML id for a chip section: stable, unique, only [a-z0-9-] whatever the name holds."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")
    return f"hw-{index + 1}-{slug}" if slug else f"hw-{index + 1}"


def _bound_counts(frame: pd.DataFrame) -> dict[str, int]:
    counts = frame["bound"].value_counts()
    return {b: int(counts.get(b, 0)) for b in BOUNDS}


def _not_fitting_mask(results: pd.DataFrame) -> pd.Series:
    return ~results["fits"].astype("boolean").fillna(True).astype(bool)


def _dim_columns(results: pd.DataFrame) -> list[str]:
    return sorted(c for c in results.columns if len(c) == 1 and c.isupper())


def _shape_text(frame: pd.DataFrame, dims: list[str]) -> pd.Series:
    """'B=128 D=4096 F=4096' from the dimension columns the row's einsum uses."""
    shape = pd.Series("", index=frame.index, dtype=object)
    einsum = frame["einsum"].astype(str)
    for d in dims:
        values = frame[d]
        used = einsum.str.contains(d, regex=False) & values.notna()
        piece = (d + "=" + values.astype("string").fillna("")).where(used, "")
        gap = pd.Series(np.where((shape != "") & (piece != ""), " ", ""), index=frame.index)
        shape = shape + gap + piece.astype(object)
    return shape


def _dtype_text(frame: pd.DataFrame) -> pd.Series:
    """'bf16' when operands and output agree, else 'bf16 × int8 → bf16'; the compute dtype is
    added only when it is not the default (the wider of X and Y, DESIGN §2)."""
    x, y, out, comp = (
        frame[c].astype(str) for c in ("x_dtype", "y_dtype", "out_dtype", "compute_dtype")
    )
    pair = x + "|" + y
    default = pair.map(
        {
            p: wider_dtype(*p.split("|")) if set(p.split("|")) <= set(DTYPES) else ""
            for p in pair.unique()
        }
    )
    text = x.where((x == y) & (y == out), x + " \u00d7 " + y + " \u2192 " + out)
    return text.where(comp == default, text + ", " + comp + " compute")


def _table_rows(rows: pd.DataFrame, dims: list[str]) -> list[dict]:
    """The shown rows of one chip's table as records (vectorized; at most the table cap)."""
    network_bytes = rows["network_bytes"].to_numpy(dtype=float)
    sends = network_bytes > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        net_intensity = rows["flops_per_chip"].to_numpy(dtype=float) / network_bytes
        net_critical = rows["peak_flops"].to_numpy(dtype=float) / rows["link_bandwidth"].to_numpy(
            dtype=float
        )
    table = pd.DataFrame(
        {
            "name": rows["name"].astype(str),
            "notes": rows["notes"].fillna("").astype(str),
            "op": rows["op"].astype(str),
            "shape": _shape_text(rows, dims),
            "flops": rows["flops"],
            "hbm_bytes": rows["hbm_bytes"],
            "dtypes": _dtype_text(rows),
            "chips": rows["chips"],
            "shard": rows["shard"].fillna("").astype(str),
            "t_lower": rows["t_lower"],
            "t_math": rows["t_math"],
            "t_hbm": rows["t_hbm"],
            "t_network": rows["t_network"],
            "bound": rows["bound"].astype(str),
            "intensity": rows["intensity"],
            "critical_intensity": rows["critical_intensity"],
            "net_intensity": np.where(sends, net_intensity, np.nan),
            "net_critical": np.where(sends, net_critical, np.nan),
            "critical_batch": rows["critical_batch"],
            "fits": rows["fits"].astype("boolean"),
        }
    )
    return _records(table)


def _catalog_value(rec: dict, key: str) -> float:
    value = rec.get(key)
    return float("nan") if value is None else float(value)


def _override_count(rows: pd.DataFrame, rec: dict) -> int:
    """Rows that use their own peak, HBM or link numbers instead of the catalog's."""
    if not rec:
        return 0
    family = rows["compute_dtype"].map({k: v[2] for k, v in DTYPES.items()})
    peak = family.map({f: _catalog_value(rec, f"peak_{f}") for f in PEAK_FAMILIES})
    link_bw = rows["link"].map({k: _catalog_value(rec, f"{k}_bandwidth") for k in LINKS})

    def differs(column: str, catalog: pd.Series | float) -> np.ndarray:
        given = rows[column].to_numpy(dtype=float)
        expected = np.broadcast_to(np.asarray(catalog, dtype=float), given.shape)
        same = np.isclose(given, expected, rtol=1e-9, atol=0.0) | (
            np.isnan(given) & np.isnan(expected)
        )
        return ~same

    changed = (
        differs("peak_flops", peak)
        | differs("hbm_bandwidth", _catalog_value(rec, "hbm_bandwidth"))
        | differs("hbm_capacity", _catalog_value(rec, "hbm_capacity"))
        | (differs("link_bandwidth", link_bw) & (rows["collective"] != "").to_numpy())
    )
    return int(changed.sum())


def _chip_facts(rec: dict, rows: pd.DataFrame) -> dict:
    """A chip's catalog numbers as used in this run: peaks per dtype, HBM, links, source."""
    used_families = set(rows["compute_dtype"].map({k: v[2] for k, v in DTYPES.items()}).dropna())
    used_links = set(rows.loc[rows["collective"] != "", "link"].dropna().astype(str))
    hbm_bw = rec.get("hbm_bandwidth")
    peaks = [
        {
            "dtype": f,
            "value": rec[f"peak_{f}"],
            "critical": rec[f"peak_{f}"] / hbm_bw if hbm_bw else None,
            "used": f in used_families,
        }
        for f in PEAK_FAMILIES
        if not _missing(rec.get(f"peak_{f}"))
    ]
    links = [
        {
            "name": link,
            "bandwidth": rec[f"{link}_bandwidth"],
            "topology": rec.get(f"{link}_topology") or "",
            "latency": rec.get(f"{link}_latency"),
            "default": rec.get("default_link") == link,
            "used": link in used_links,
        }
        for link in LINKS
        if not _missing(rec.get(f"{link}_bandwidth"))
    ]
    return {
        "known": bool(rec),
        "vendor": rec.get("vendor") or "",
        "aliases": [a for a in str(rec.get("aliases") or "").split(";") if a],
        "peaks": peaks,
        "hbm_capacity": rec.get("hbm_capacity"),
        "hbm_bandwidth": hbm_bw,
        "links": links,
        "source": rec.get("source") or "",
        "as_of": rec.get("as_of") or "",
    }


def _png_record(chart: Chart, run_dir: Path) -> dict:
    """A chart as a data: URI with its pixel size; OutputError when the PNG is missing or bad."""
    path = Path(run_dir) / chart.path
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise OutputError(f"chart '{chart.title}' ({path}) cannot be read: {exc}") from exc
    if not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        raise OutputError(f"chart '{chart.title}' ({path}) is not a PNG file")
    return {
        "title": chart.title,
        "kind": chart.kind,
        "hardware": chart.hardware or "",
        "series": list(chart.series),
        "width": int.from_bytes(data[16:20], "big"),
        "height": int.from_bytes(data[20:24], "big"),
        "src": "data:image/png;base64," + base64.b64encode(data).decode("ascii"),
    }


def _series_summary(results: pd.DataFrame, names: list[str]) -> dict[str, dict]:
    """Per sweep series: rows, chips, bound counts, critical batch range, best peak fraction."""
    rows = results[results["series"].isin(names)]
    if rows.empty:
        return {}
    grouped = rows.groupby("series", sort=False)
    bounds = pd.crosstab(rows["series"], rows["bound"]).reindex(columns=list(BOUNDS), fill_value=0)
    table = pd.DataFrame(
        {
            "rows": grouped.size(),
            "hardware": grouped["hardware"].agg(lambda s: ", ".join(sorted(s.unique()))),
            "critical_min": grouped["critical_batch"].min(),
            "critical_max": grouped["critical_batch"].max(),
            "best_fraction": grouped["peak_fraction"].max(),
            "t_min": grouped["t_lower"].min(),
            "t_max": grouped["t_lower"].max(),
        }
    ).join(bounds)
    table.index.name = "name"
    return {r["name"]: r for r in _records(table.reset_index())}


def _worst_per_series(table: pd.DataFrame, key: str, n: int, series: pd.Series) -> pd.DataFrame:
    """The rows with the n largest `key` values, one per series (a sweep shows its worst point),
    each with `in_series`: how many of the table's rows belong to its series. `series` numbers
    the series of every row of the run (its index holds the table's)."""
    codes = series.loc[table.index].to_numpy()
    counts = np.bincount(codes)[codes] if len(codes) else codes
    order = np.argsort(-table[key].to_numpy(float), kind="stable")  # NaN last, ties in order
    first = np.unique(codes[order], return_index=True)[1]  # each series' worst row, ranked
    picks = order[np.sort(first)[:n]]
    return table.iloc[picks].assign(in_series=counts[picks])


def _findings(results: pd.DataFrame) -> dict:
    """What a reviewer should look at first (issue 5 §4); lists capped, counts complete."""
    base = results[["name", "series", "hardware", "bound", "chips"]]
    series = pd.Series(pd.factorize(results["series"])[0], index=results.index)
    slow = base.assign(
        t_lower=results["t_lower"], t_upper=results["t_upper"], t_math=results["t_math"]
    )
    slow_top = _worst_per_series(slow, "t_lower", SLOWEST_ROWS, series)

    comm = results.loc[results["bound"] != "compute"]
    t_comm = np.maximum(comm["t_hbm"].to_numpy(float), comm["t_network"].to_numpy(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = t_comm / comm["t_math"].to_numpy(float)
    comm_table = base.loc[comm.index].assign(
        t_math=comm["t_math"], t_comm=t_comm, factor=np.where(np.isnan(factor), np.inf, factor)
    )
    comm_top = _worst_per_series(comm_table, "factor", FINDING_ROWS, series)

    nofit = results.loc[_not_fitting_mask(results)]
    nofit_table = base.loc[nofit.index].assign(
        footprint=nofit["memory_footprint"],
        capacity=nofit["hbm_capacity"],
        over=nofit["memory_footprint"] / nofit["hbm_capacity"],
    )
    nofit_top = _worst_per_series(nofit_table, "over", FINDING_ROWS, series)

    measured = results.loc[results["measured_seconds"].notna()]
    ratio = measured["measured_over_predicted"]
    low, high = MEASURED_RANGE
    off = measured.loc[~ratio.between(low, high)]
    off_table = base.loc[off.index].assign(
        measured=off["measured_seconds"],
        t_lower=off["t_lower"],
        ratio=off["measured_over_predicted"],
        distance=np.abs(np.log(off["measured_over_predicted"].to_numpy(float))),
    )
    off_top = _worst_per_series(off_table, "distance", FINDING_ROWS, series)

    return {
        "slowest": _records(slow_top),
        "comm_total": len(comm),
        "comm_memory": int((comm["bound"] == "memory").sum()),
        "comm_network": int((comm["bound"] == "network").sum()),
        "comm_series": int(comm["series"].nunique()),
        "comm": _records(comm_top),
        "nofit_total": len(nofit),
        "nofit_series": int(nofit["series"].nunique()),
        "nofit": _records(nofit_top),
        "measured_total": len(measured),
        "measured_off_total": len(off),
        "measured_off_series": int(off["series"].nunique()),
        "measured_off": _records(off_top.drop(columns="distance")),
        "measured_low": low,
        "measured_high": high,
        "listed": FINDING_ROWS,
        "slowest_listed": SLOWEST_ROWS,
    }


def build_report_context(
    meta: RunMeta,
    results: pd.DataFrame,
    errors: pd.DataFrame,
    hardware: list[dict],
    charts: list[Chart],
    run_dir: Path,
    *,
    max_table_rows: int = DEFAULT_TABLE_ROWS,
) -> tuple[dict, list[str]]:
    """The report template's variables (plain records and scalars) and the table-cap notices."""
    if max_table_rows < 0:
        raise ValueError("max_table_rows must be >= 0")
    n = len(results)
    dims = _dim_columns(results)
    catalog = {str(rec["name"]): rec for rec in hardware}
    order = list(dict.fromkeys([*catalog, *sorted(results["hardware"].astype(str).unique())]))
    by_chip = results.groupby("hardware", sort=False).indices
    chart_records = [(c, _png_record(c, run_dir)) for c in charts]
    placed: set[int] = set()

    chips, split, notices = [], [], []
    for i, name in enumerate(order):
        idx = by_chip.get(name, np.array([], dtype=int))
        rows = results.iloc[idx]
        total = len(rows)
        if total == 0 and name not in catalog:
            continue
        counts = _bound_counts(rows)
        shown = rows.head(max_table_rows)
        if total > len(shown):
            notices.append(_cap_notice(name, len(shown), total))
        own_charts = []
        for k, (chart, rec) in enumerate(chart_records):
            if chart.kind in ("roofline", "network") and chart.hardware == name:
                own_charts.append(rec)
                placed.add(k)
        chips.append(
            {
                "name": name,
                "anchor": _anchor(i, name),
                "scenarios": total,
                "counts": counts,
                "not_fitting": int(_not_fitting_mask(rows).sum()),
                "overrides": _override_count(rows, catalog.get(name, {})),
                "charts": own_charts,
                "rows": _table_rows(shown, dims),
                "shown": len(shown),
                "more": total - len(shown),
                **_chip_facts(catalog.get(name, {}), rows),
            }
        )
        communication = counts["memory"] + counts["network"]
        split.append(
            {
                "name": name,
                "anchor": _anchor(i, name),
                "scenarios": total,
                **counts,
                "communication": communication,
                "compute_share": _share(counts["compute"], total),
                "memory_share": _share(counts["memory"], total),
                "network_share": _share(counts["network"], total),
                "communication_share": _share(communication, total),
            }
        )

    sweep_names = sorted({s for c in charts if c.kind == "sweep" for s in c.series})
    series = _series_summary(results, sweep_names)
    sweeps, summary_charts, other_charts = [], [], []
    for k, (chart, rec) in enumerate(chart_records):
        if k in placed:
            continue
        if chart.kind == "sweep":
            sweeps.append({**rec, "rows": [series[s] for s in chart.series if s in series]})
        elif chart.kind == "summary":
            summary_charts.append(rec)
        else:
            other_charts.append(rec)

    counts = _bound_counts(results)
    not_fitting = int(_not_fitting_mask(results).sum())
    headline = [
        {"key": "scenarios", "label": "scenarios", "count": n, "share": None, "of": ""},
        *(
            {
                "key": b,
                "label": f"{b}-bound",
                "count": counts[b],
                "share": _share(counts[b], n),
                "of": "of scenarios",
            }
            for b in BOUNDS
        ),
        {
            "key": "nofit",
            "label": "not fitting in HBM",
            "count": not_fitting,
            "share": _share(not_fitting, n),
            "of": "of scenarios",
        },
        {
            "key": "rejected",
            "label": "rejected input rows",
            "count": meta.rejected_rows,
            "share": _share(meta.rejected_rows, meta.source_rows),
            "of": "of input rows",
        },
    ]
    meta_record = {k: v for k, v in meta.as_dict().items() if k not in ("notices", "warnings")}
    context = {
        "meta": meta_record,
        "notices": list(dict.fromkeys([*meta.notices, *notices])),
        "warnings": list(meta.warnings),
        "headline": headline,
        "split": split,
        "summary_charts": summary_charts,
        "chips": chips,
        "sweeps": sweeps,
        "other_charts": other_charts,
        "findings": _findings(results),
        "errors": _records(errors.reindex(columns=["line", "name", "column", "reason"])),
        "max_table_rows": max_table_rows,
    }
    return context, notices


# ---------------------------------------------------------------- rendering


def _cap_notice(chip: str, shown: int, total: int) -> str:
    return (
        f"The {chip} table shows the first {shown:,} of {total:,} scenarios; "
        f"the other {total - shown:,} are in results.csv."
    )


def table_cap_notices(results: pd.DataFrame, max_table_rows: int) -> list[str]:
    """What the per-hardware table cap leaves out, known before the report is rendered."""
    counts = results["hardware"].astype(str).value_counts(sort=False)
    return [
        _cap_notice(chip, max_table_rows, int(total))
        for chip, total in counts.items()
        if total > max_table_rows
    ]


def render_report_html(
    meta: RunMeta,
    results: pd.DataFrame,
    errors: pd.DataFrame,
    hardware: list[dict],
    charts: list[Chart],
    run_dir: Path,
    *,
    max_table_rows: int = DEFAULT_TABLE_ROWS,
) -> str:
    """The report as an HTML string (see render_report)."""
    html, _ = _render(meta, results, errors, hardware, charts, run_dir, max_table_rows)
    return html


def render_report(
    path: Path,
    meta: RunMeta,
    results: pd.DataFrame,
    errors: pd.DataFrame,
    hardware: list[dict],
    charts: list[Chart],
    run_dir: Path,
    *,
    max_table_rows: int = DEFAULT_TABLE_ROWS,
) -> list[str]:
    """Write the self-contained report.html; returns notices saying what the table cap left out."""
    html, notices = _render(meta, results, errors, hardware, charts, run_dir, max_table_rows)
    Path(path).write_text(html, encoding="utf-8", newline="\n")
    return notices


def _render(meta, results, errors, hardware, charts, run_dir, max_table_rows):
    context, notices = build_report_context(
        meta, results, errors, hardware, charts, run_dir, max_table_rows=max_table_rows
    )
    return environment().get_template(REPORT_TEMPLATE).render(**context), notices


def _relative_href(href: str) -> str:
    """A link to a run's report: relative paths only, URL-quoted (nothing external, no scheme)."""
    text = str(href).replace("\\", "/")
    if text.startswith(("/", "//")) or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text):
        raise PipelineError(f"index link '{href}' must be a relative path to a report")
    return quote(text, safe="/#")


def render_index_html(runs: list[dict]) -> str:
    """The batch index page as an HTML string (see render_index)."""
    records = []
    for run in runs:
        missing = [k for k in INDEX_KEYS if k not in run]
        if missing:
            raise PipelineError(f"index entry {run.get('run_name', '?')!r} lacks {missing}")
        rec = {k: run[k] for k in INDEX_KEYS}
        rec["report_href"] = _relative_href(run["report_href"])
        rec["communication"] = run["memory"] + run["network"]
        records.append(rec)
    totals = {
        k: sum(int(r[k]) for r in records)
        for k in ("scenarios", "compute", "memory", "network", "not_fitting", "rejected")
    }
    totals["communication"] = totals["memory"] + totals["network"]
    return environment().get_template(INDEX_TEMPLATE).render(runs=records, totals=totals)


def render_index(path: Path, runs: list[dict]) -> Path:
    """Write OUTPUT_DIR/index.html linking each run's report with its headline counts."""
    path = Path(path)
    path.write_text(render_index_html(runs), encoding="utf-8", newline="\n")
    return path
