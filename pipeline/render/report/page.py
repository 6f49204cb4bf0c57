"""The HTML review report (docs/outputs.md#the-review-report-reporthtml): the answer first
(the bottom line, one line per series, the findings), then the details (sweeps, per chip its
numbers and its scenarios grouped by series), the method and the rejected rows.

The template receives plain records and scalars built here from the analysis (the top: the
answer, tiles and findings, in render.report.headline); the statistics come from its Summary,
the words of the answer from render.text.answer, and human formatting (ms, TFLOP/s, GB, %)
happens only in render.format (the template's filters). The page is
self-contained: inline CSS and JS, charts embedded as base64 PNG, no external URL. The output
depends only on its inputs (no clock, no random ids), so it can be diffed and golden-tested.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np
from PIL import Image

from pipeline.calibration.estimate import unused_warnings
from pipeline.errors import OutputError
from pipeline.i18n import _, current_lang, use_lang
from pipeline.limits import DEFAULT_TABLE_ROWS
from pipeline.model.roofline import BOUNDS
from pipeline.names import slug
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.charts import Chart
from pipeline.render.report.changes import changes_summary
from pipeline.render.report.fleet import fleet_context
from pipeline.render.report.headline import answer_context, findings, tiles
from pipeline.render.report.serving import serving_context
from pipeline.render.report.tables import (
    chip_facts,
    chip_series,
    hidden_series,
    records,
    scenario_blocks,
    shown_rows,
)
from pipeline.render.report.training import training_context
from pipeline.render.templates import REPORT_TEMPLATE, environment
from pipeline.render.text import answer
from pipeline.render.text.steps_table import models_table


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _anchor(index: int, name: str) -> str:
    """An HTML id for a chip section: stable, unique, only [a-z0-9-] whatever the name holds."""
    part = slug(name)
    return f"hw-{index + 1}-{part}" if part else f"hw-{index + 1}"


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


# ---------------------------------------------------------------- the report


def _sweep(chart: dict, rows: list[dict]) -> dict:
    """A sweep chart with its series' lines on its chip (report_tables.chip_series); and the
    columns worth showing: dtypes and chips when some line differs from the default, the
    critical batch when some line has one, the best % of peak when some line does math, and
    a collective's latency knee and network-bound count in place of the bound counts."""
    collective = bool(rows) and all(r["collective"] for r in rows)
    return {
        **chart,
        "rows": rows,
        "collective": collective,
        "show_dtype": "dtype" in answer.differing(rows),
        "show_chips": "chips" in answer.differing(rows),
        "show_critical": any(r["critical_min"] is not None for r in rows),
        "show_peak": not collective,
        "show_knee": any(r["knee_min"] is not None for r in rows),
    }


def cap_notice(
    chip: str, shown: int, total: int, rows_in: str = "results.csv", beyond: int = 0,
    hidden: int = 0,
) -> str:  # fmt: skip
    """What a chip's capped table leaves out: it shows the first `shown` rows and `beyond`
    more (the first and slowest row of each series past the cap, of at most `shown` series:
    report_tables.shown_rows; `hidden` series past those have no row)."""
    values = {
        "chip": chip,
        "shown": fmt.count(shown),
        "total": fmt.count(total),
        "other": fmt.count(total - shown - beyond),
        "rows_in": rows_in,
        "beyond": fmt.count(beyond),
        "hidden": fmt.count(hidden),
    }
    if beyond and hidden:
        return _(
            "The {chip} table shows the first {shown} of {total} scenarios and, past them, each "
            "of the next {shown} series' first and slowest row ({beyond} more); {hidden} more "
            "series have no row here; the other {other} are in {rows_in}.",
            **values,
        )
    if beyond:
        return _(
            "The {chip} table shows the first {shown} of {total} scenarios and, past them, each "
            "series' first and slowest row ({beyond} more); the other {other} are in {rows_in}.",
            **values,
        )
    if hidden:
        return _(
            "The {chip} table shows the first {shown} of {total} scenarios; {hidden} more series "
            "have no row here; the other {other} are in {rows_in}.",
            **values,
        )
    return _(
        "The {chip} table shows the first {shown} of {total} scenarios; the other {other} are "
        "in {rows_in}.",
        **values,
    )


def report_context(
    analysis: Record,
    run_name: str,
    charts: Sequence[tuple[Chart, bytes]] = (),
    notices: Sequence[str] = (),
    max_table_rows: int = DEFAULT_TABLE_ROWS,
    baseline=None,
) -> dict:
    """The template's variables: plain records and scalars. `baseline`: the changes since
    an earlier run (run.baseline.Baseline), shown first."""
    results, summary = analysis.results, analysis.summary
    calibration_said = set(unused_warnings(summary.calibration))
    catalog = {str(rec["name"]): rec for rec in analysis.hardware}
    order = list(dict.fromkeys([*catalog, *summary.per_hardware.index]))
    by_chip = results.groupby("hardware", sort=False, observed=True).indices
    chart_records = [(c, _png_record(c, data)) for c, data in charts]
    used = summary.rates_used
    derated, chip_table = summary.derated, summary.chips
    placed: set[int] = set()
    chips, split = [], []
    names = [name for name in order if name in summary.per_hardware.index]
    none = np.array([], dtype=np.intp)  # a chip the Dask sample has no row of: its counts
    shown = {name: shown_rows(results, by_chip.get(name, none), max_table_rows) for name in names}
    blocks = dict(zip(names, scenario_blocks(analysis, list(shown.values())), strict=True))
    for i, name in enumerate(order):
        if name not in summary.per_hardware.index:
            continue
        counts = summary.per_hardware.loc[name]
        total = int(counts["total"])
        at = shown[name]
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
                "blocks": blocks[name],
                "shown": len(at),
                "first": min(len(at), max_table_rows),  # the rest: each later series' first
                "beyond": max(len(at) - max_table_rows, 0),  # and slowest (shown_rows)
                "more": total - len(at),
                **chip_facts(
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
    pairs = [(c.hardware, s) for c, _rec in chart_records if c.kind == "sweep" for s in c.series]
    by_pair = chip_series(analysis, pairs)  # a sweep chart's table: its chip's lines only
    sweeps, summary_charts, other_charts, fleet_charts = [], [], [], {}
    serving_charts: dict[str, list[dict]] = {}  # under its series' Serving table
    training_charts: dict[str, list[dict]] = {}  # under its series' Training table
    for k, (chart, rec) in enumerate(chart_records):
        if k in placed:
            continue
        if chart.kind == "fleet" and chart.series:  # beside its series' answer
            fleet_charts[chart.series[0]] = rec
        elif chart.kind == "serving" and chart.series:
            serving_charts.setdefault(chart.series[0], []).append(rec)
        elif chart.kind == "training" and chart.series:
            training_charts.setdefault(chart.series[0], []).append(rec)
        elif chart.kind == "sweep":
            own = [by_pair[k] for s in chart.series if (k := (chart.hardware, s)) in by_pair]
            sweeps.append(_sweep(rec, own))
        elif chart.kind == "summary":
            summary_charts.append(rec)
        else:
            other_charts.append(rec)
    meta = {
        "run_name": run_name,
        "input_path": analysis.source,
        "input_sha256": analysis.source_sha256 or "",
        "started": analysis.started,
        "tool_version": analysis.tool_version,
        "catalog_version": analysis.catalog_version,
        "source_rows": summary.source_rows,
        "scenarios": summary.scenarios,
        "rejected_rows": summary.rejected_rows,
    }
    return {
        "meta": meta,
        "answer": answer_context(analysis),
        "models": models_table(analysis),  # one line per step, before the series
        "fleet": fleet_context(summary.fleet, charts=fleet_charts),  # under the series
        "serving": serving_context(summary.serving, serving_charts),  # before the steps
        "training": training_context(summary.training, training_charts),  # after serving
        "tiles": tiles(analysis),
        "notices": list(dict.fromkeys(notices)),
        # about the input; the calibration's own warning is said with it (answer.calibration)
        "warnings": [w for w in analysis.warnings if w not in calibration_said],
        "split": split,
        "summary_charts": summary_charts,
        "chips": chips,
        "sweeps": sweeps,
        "other_charts": other_charts,
        "collective_sweeps": any(s["collective"] for s in sweeps),
        "flop_sweeps": any(not s["collective"] for s in sweeps),
        "findings": findings(analysis),
        "errors": records(analysis.problems),
        "max_table_rows": max_table_rows,
        "rows_in": analysis.rows_in,
        "sampled": analysis.sampled,
        "since": changes_summary(baseline) if baseline is not None else None,
    }


def table_cap_notices(analysis: Record, max_table_rows: int) -> list[str]:
    """What the per-hardware table cap leaves out."""
    if analysis.sampled:  # the tables show a sample: the Dask notice says so, once
        return []
    totals = analysis.summary.per_hardware["total"]
    capped = [chip for chip, total in totals.items() if total > max_table_rows]
    if not capped:
        return []
    results = analysis.results
    by_chip = results.groupby("hardware", sort=False, observed=True).indices
    notices = []
    for chip in capped:  # the few chips past the cap
        shown = len(shown_rows(results, by_chip[chip], max_table_rows))
        if shown == totals[chip]:  # the rows past the cap are each series' first or slowest
            continue
        beyond = shown - max_table_rows
        hidden = hidden_series(results, by_chip[chip], max_table_rows)
        notices.append(
            cap_notice(chip, max_table_rows, int(totals[chip]), analysis.rows_in, beyond, hidden)
        )
    return notices


def render_report(
    analysis: Record,
    run_name: str,
    charts: Sequence[tuple[Chart, bytes]] = (),
    notices: Sequence[str] = (),
    max_table_rows: int = DEFAULT_TABLE_ROWS,
    baseline=None,
) -> str:
    """The self-contained report.html of an analysis, its charts given as (Chart, PNG bytes);
    `notices` say what the run's caps left out; `baseline` opens it with the changes since."""
    with use_lang(current_lang()):  # its thousands of texts: the language looked up once
        context = report_context(analysis, run_name, charts, notices, max_table_rows, baseline)
        return environment().get_template(REPORT_TEMPLATE).render(**context)
