"""The HTML review report (docs/outputs.md#the-review-report-reporthtml).

The template receives plain records and scalars built here from the analysis; the statistics
come from its Summary, and human formatting (ms, TFLOP/s, GB, %) happens only in the
template's filters (render.templates). The page is self-contained: inline CSS and JS, charts
embedded as base64 PNG, no external URL. The output depends only on its inputs (no clock, no
random ids), so it can be diffed and golden-tested.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np
import pandas as pd
from PIL import Image

from pipeline.errors import OutputError
from pipeline.limits import DEFAULT_TABLE_ROWS
from pipeline.model.catalog import LINKS
from pipeline.model.dtypes import DTYPES, PEAK_FAMILIES, dtype_labels
from pipeline.model.roofline import BOUNDS, EFFICIENCIES
from pipeline.names import slug
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.charts import Chart
from pipeline.render.templates import REPORT_TEMPLATE, environment

# ---------------------------------------------------------------- records


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts of plain Python values, None for NaN/NA."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _anchor(index: int, name: str) -> str:
    """An HTML id for a chip section: stable, unique, only [a-z0-9-] whatever the name holds."""
    part = slug(name)
    return f"hw-{index + 1}-{part}" if part else f"hw-{index + 1}"


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


def _dtype_text(frame: pd.DataFrame) -> np.ndarray:
    """Each row's dtypes as the one label (model.dtypes.dtype_labels)."""
    return dtype_labels(*(frame[c] for c in ("x_dtype", "y_dtype", "out_dtype", "compute_dtype")))


def _table_rows(rows: pd.DataFrame, facts: pd.DataFrame, dims: list[str]) -> list[dict]:
    """The shown rows of one chip's table as records (vectorized; at most the table cap), with
    their facts (the same rows of Record.facts)."""
    collective = (facts["kind"] == "collective").to_numpy()  # V, its size, is the volume
    network_bytes = rows["network_bytes"].to_numpy(dtype=float)
    table = pd.DataFrame(
        {
            "name": rows["name"].astype(str),
            "notes": rows["notes"].fillna("").astype(str),
            "op": rows["op"].astype(str),
            "shape": _shape_text(rows, dims),
            "flops": rows["flops"],
            "hbm_bytes": rows["hbm_bytes"],
            "volume": np.where(collective, network_bytes, np.nan),
            "dtypes": _dtype_text(rows),
            "chips": rows["chips"],
            "shard": rows["shard"].astype(str).replace("nan", ""),
            "t_lower": rows["t_lower"],
            "t_math": rows["t_math"],
            "t_hbm": rows["t_hbm"],
            "t_network": rows["t_network"],
            "bound": rows["bound"].astype(str),
            "intensity": rows["intensity"],
            "critical_intensity": rows["critical_intensity"],
            "net_intensity": facts["network_intensity"].to_numpy(),
            "net_critical": facts["network_critical_intensity"].to_numpy(),
            "critical_batch": rows["critical_batch"],
            "fits": rows["fits"].astype("boolean"),
        }
    )
    return records(table)


def _used(results: pd.DataFrame) -> dict[str, tuple[set[str], set[str]]]:
    """Per chip: the peak families its rows compute in, the links its rows communicate over
    (from the distinct pairs: no per-row Python work)."""
    family = {k: v[2] for k, v in DTYPES.items()}
    used: dict[str, tuple[set[str], set[str]]] = {}
    pairs = results[["hardware", "compute_dtype"]].drop_duplicates()
    for chip, dtype in pairs.itertuples(index=False):
        used.setdefault(str(chip), (set(), set()))[0].add(family.get(str(dtype), str(dtype)))
    talking = results.loc[results["collective"].astype(str) != "", ["hardware", "link"]]
    for chip, link in talking.drop_duplicates().itertuples(index=False):
        used.setdefault(str(chip), (set(), set()))[1].add(str(link))
    return used


def _chip_facts(
    rec: dict, used: tuple[set[str], set[str]], derated: pd.DataFrame, chip: pd.Series
) -> dict:
    """A chip's catalog numbers as used in this run: peaks per dtype, HBM, links, source; with
    the derated rates of its most used efficiencies beside them (its row of Summary.chips)."""
    used_families, used_links = used
    hbm_bw = rec.get("hbm_bandwidth")
    e = {c: float(chip[c]) for c in EFFICIENCIES}
    others = []
    if len(derated):
        others = [
            f"{fmt.efficiencies(row)} ({fmt.plural(int(row['rows']), 'row')})"
            for _, row in derated.iloc[1:].iterrows()  # a few distinct triples, not rows
        ]
    peaks = [
        {
            "dtype": f,
            "value": rec[f"peak_{f}"],
            "critical": rec[f"peak_{f}"] / hbm_bw if hbm_bw else None,
            "used": f in used_families,
            "derated": chip[f"peak_{f}_derated"],
        }
        for f in PEAK_FAMILIES
        if not fmt.missing(rec.get(f"peak_{f}"))
    ]
    links = [
        {
            "name": link,
            "bandwidth": rec[f"{link}_bandwidth"],
            "topology": rec.get(f"{link}_topology") or "",
            "latency": rec.get(f"{link}_latency"),
            "default": rec.get("default_link") == link,
            "used": link in used_links,
            "derated": chip[f"{link}_bandwidth_derated"],
        }
        for link in LINKS
        if not fmt.missing(rec.get(f"{link}_bandwidth"))
    ]
    return {
        "known": bool(rec),
        "vendor": rec.get("vendor") or "",
        "aliases": [a for a in str(rec.get("aliases") or "").split(";") if a],
        "peaks": peaks,
        "hbm_capacity": rec.get("hbm_capacity"),
        "hbm_bandwidth": hbm_bw,
        "hbm_derated": chip["hbm_bandwidth_derated"] if hbm_bw else None,
        "links": links,
        "derated_rows": int(chip["derated_rows"]),
        "derate": fmt.efficiencies(e) if len(derated) else "",
        "derated_kinds": {k: e[f"{k}_efficiency"] < 1 for k in ("compute", "hbm", "network")},
        "derate_rows": int(chip["top_rows"]),
        "other_derates": others,
        "source": rec.get("source") or "",
        "as_of": rec.get("as_of") or "",
    }


def _png_record(chart: Chart, data: bytes) -> dict:
    """A chart as a data: URI with its pixel size; OutputError when it is not a PNG."""
    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
            width, height = image.size  # read from the header; the pixels are not decoded
    except OSError as exc:  # Pillow's UnidentifiedImageError, or a truncated file
        raise OutputError(f"chart '{chart.title}' ({chart.path}) is not a PNG image") from exc
    return {
        "title": chart.title,
        "kind": chart.kind,
        "hardware": chart.hardware or "",
        "series": list(chart.series),
        "width": width,
        "height": height,
        "src": "data:image/png;base64," + base64.b64encode(data).decode("ascii"),
    }


def _findings(analysis: Record) -> dict:
    found = dict(analysis.summary.findings)
    for key in ("slowest", "comm", "nofit", "measured_off"):
        found[key] = records(found[key])
    return found


# ---------------------------------------------------------------- the report


def cap_notice(chip: str, shown: int, total: int) -> str:
    return (
        f"The {chip} table shows the first {shown:,} of {total:,} scenarios; "
        f"the other {total - shown:,} are in results.csv."
    )


def report_context(
    analysis: Record,
    run_name: str,
    charts: Sequence[tuple[Chart, bytes]] = (),
    notices: Sequence[str] = (),
    max_table_rows: int = DEFAULT_TABLE_ROWS,
) -> dict:
    """The template's variables: plain records and scalars."""
    results, facts, summary = analysis.results, analysis.facts, analysis.summary
    dims = list(analysis.dims)
    catalog = {str(rec["name"]): rec for rec in analysis.hardware}
    order = list(dict.fromkeys([*catalog, *summary.per_hardware.index]))
    by_chip = results.groupby(results["hardware"].astype(str), sort=False).indices
    chart_records = [(c, _png_record(c, data)) for c, data in charts]
    used = _used(results)
    derated, chip_table = summary.derated, summary.chips
    placed: set[int] = set()
    chips, split = [], []
    for i, name in enumerate(order):
        if name not in summary.per_hardware.index:
            continue
        counts = summary.per_hardware.loc[name]
        total = int(counts["total"])
        at = by_chip[name][:max_table_rows]
        shown = results.iloc[at]
        own = []
        for k, (chart, rec) in enumerate(chart_records):
            if chart.kind in ("roofline", "network") and chart.hardware == name:
                own.append(rec)
                placed.add(k)
        bound = {b: int(counts[b]) for b in BOUNDS}
        chips.append(
            {
                "name": name,
                "anchor": _anchor(i, name),
                "scenarios": total,
                "counts": bound,
                "not_fitting": int(counts["not_fitting"]),
                "overrides": summary.overrides.get(name, 0),
                "charts": own,
                "rows": _table_rows(shown, facts.iloc[at], dims),
                "shown": len(shown),
                "more": total - len(shown),
                **_chip_facts(
                    catalog.get(name, {}),
                    used.get(name, (set(), set())),
                    derated[derated["hardware"] == name],
                    chip_table.loc[name],
                ),
            }
        )
        communication = bound["memory"] + bound["network"]
        split.append(
            {
                "name": name,
                "anchor": _anchor(i, name),
                "scenarios": total,
                **bound,
                "communication": communication,
                **{f"{b}_share": _share(bound[b], total) for b in BOUNDS},
                "communication_share": _share(communication, total),
            }
        )
    series = {
        name: {"name": name, **row}
        for name, row in zip(summary.series.index, records(summary.series), strict=True)
    }
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
    n = summary.scenarios
    headline = [
        {"key": "scenarios", "label": "scenarios", "count": n, "share": None, "of": ""},
        *(
            {
                "key": b,
                "label": f"{b}-bound",
                "count": summary.bounds[b],
                "share": _share(summary.bounds[b], n),
                "of": "of scenarios",
            }
            for b in BOUNDS
        ),
        {
            "key": "nofit",
            "label": "not fitting in HBM",
            "count": summary.not_fitting,
            "share": _share(summary.not_fitting, n),
            "of": "of scenarios",
        },
        {
            "key": "rejected",
            "label": "rejected input rows",
            "count": summary.rejected_rows,
            "share": _share(summary.rejected_rows, summary.source_rows),
            "of": "of input rows",
        },
    ]
    meta = {
        "run_name": run_name,
        "input_path": analysis.source,
        "input_sha256": analysis.source_sha256 or "",
        "started": analysis.started,
        "tool_version": analysis.tool_version,
        "catalog_version": analysis.catalog_version,
        "source_rows": summary.source_rows,
        "scenarios": n,
        "rejected_rows": summary.rejected_rows,
    }
    return {
        "meta": meta,
        "notices": list(dict.fromkeys(notices)),
        "warnings": list(analysis.warnings),
        "headline": headline,
        "split": split,
        "summary_charts": summary_charts,
        "chips": chips,
        "sweeps": sweeps,
        "other_charts": other_charts,
        "findings": _findings(analysis),
        "errors": records(analysis.problems),
        "max_table_rows": max_table_rows,
    }


def table_cap_notices(analysis: Record, max_table_rows: int) -> list[str]:
    """What the per-hardware table cap leaves out."""
    totals = analysis.summary.per_hardware["total"]
    return [
        cap_notice(chip, max_table_rows, int(total))
        for chip, total in totals.items()
        if total > max_table_rows
    ]


def render_report(
    analysis: Record,
    run_name: str,
    charts: Sequence[tuple[Chart, bytes]] = (),
    notices: Sequence[str] = (),
    max_table_rows: int = DEFAULT_TABLE_ROWS,
) -> str:
    """The self-contained report.html of an analysis, its charts given as (Chart, PNG bytes);
    `notices` say what the run's caps left out."""
    context = report_context(analysis, run_name, charts, notices, max_table_rows)
    return environment().get_template(REPORT_TEMPLATE).render(**context)
