"""The statistics of a run: bound counts (per hardware and per op), rows that do not fit,
rows that give their own numbers, critical batches per series, sweep series, derated rows
and the findings a reviewer looks at first. Every output (terminal, summary.json, manifest,
charts, workbook, report, batch index) reads them from here (docs/outputs.md).

`finish` makes the Summary of merged partials (summary.partial), for both engines: the local
one is a run of one frame, `finish(merge([partial(...)]))`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from pipeline.calibration.estimate import calibration_summary
from pipeline.catalogs.hardware import RATE_EFFICIENCY
from pipeline.model.dtypes import PEAK_FAMILIES
from pipeline.model.groups import TOTAL_OPS
from pipeline.model.roofline import BOUNDS, EFFICIENCIES
from pipeline.model.roofs import ChipRoofs, catalog_ridges, chip_roofs, rates_of
from pipeline.summary.findings import PARTIAL_KEYS
from pipeline.summary.fleet import fleet_answer
from pipeline.summary.grids import Grids
from pipeline.summary.idle import idle_lines
from pipeline.summary.partial import Partial
from pipeline.summary.series import bottom_line, finished_lines
from pipeline.summary.serving import serving_answer
from pipeline.summary.steps import ranked_steps
from pipeline.summary.training import training_answer


@dataclass(frozen=True, eq=False)
class Summary:
    """What a run found, over every scenario. Counts are plain ints; tables are DataFrames."""

    scenarios: int
    source_rows: int
    rejected_rows: int  # input lines with at least one problem
    problems: int  # problems found (a line may have several)
    bounds: Mapping[str, int]  # compute / memory / network -> scenarios
    not_fitting: int
    per_hardware: pd.DataFrame  # index hardware: compute, memory, network, not_fitting, total
    per_op: pd.DataFrame  # index op: the same columns
    overrides: Mapping[str, int]  # hardware -> rows giving their own peak/HBM/link numbers
    critical_batches: pd.DataFrame  # per series with one: hardware, op, dtypes, low, high
    # the slowest scenarios, the communication-bound ones (ops with FLOPs), those that do
    # not fit, and those whose measured time is far from the prediction (a sweep listed
    # once): tables capped (summary.findings), counts complete
    findings: Mapping = field(repr=False)
    # rows timed at less than a nominal rate: per hardware and distinct efficiencies
    # (compute, HBM, network), the rows using them, most used first per chip
    derated: pd.DataFrame = field(repr=False)
    # per chip used: its most used efficiencies and each catalog rate derated by them
    chips: pd.DataFrame = field(repr=False)
    # per chip used: the peak families its rows compute in and the links its rows send over
    rates_used: Mapping[str, tuple[frozenset[str], frozenset[str]]] = field(repr=False)
    # per series (a source row: a sweep or one scenario), the unit people read (summary.series),
    # its shape worded from its dims' ranges over every row (summary.series.finished_lines)
    lines: pd.DataFrame = field(repr=False)
    # per sweep series and chip (index series, hardware): its line over that chip's rows, with
    # a collective's latency knee (summary.series.chip_lines): a sweep chart's table
    chip_lines: pd.DataFrame = field(repr=False)
    bottom: Mapping = field(repr=False)  # the run in numbers
    # the fleet answer (summary.fleet): per fleet series and chosen point of its sweep, its
    # fleet points (chip x precision x chip count) fastest first, and each one's curve
    fleet: pd.DataFrame = field(repr=False)
    fleet_curves: pd.DataFrame = field(repr=False)
    # the Models table's steps and group totals, slowest first with every configuration's best
    # (summary.steps: their numbers and each one's top op) and how many there are in all
    steps: pd.DataFrame = field(repr=False)
    steps_total: int
    # per input line whose rows split a dim over more chips than it has (summary.idle)
    idle: pd.DataFrame = field(repr=False)
    # the serving answer (summary.serving): per serve series and model, each configuration at
    # its best point, those meeting the targets ranked first; and every serve point, for charts
    serving: pd.DataFrame = field(repr=False)
    serving_curves: pd.DataFrame = field(repr=False)
    # the training answer (summary.training): per train series its train rows, the fewest days
    # first, those that do not fit after
    training: pd.DataFrame = field(repr=False)
    # every scenario's points binned, for charts drawn from a sample of the rows (summary.grids)
    grids: Grids | None = field(default=None, repr=False)
    # per chip used: the roofs its charts are drawn against, of every row (model.roofs)
    roofs: Mapping[str, ChipRoofs] = field(default_factory=dict, repr=False)
    # the calibration the run applied (calibration.estimate.calibration_summary), or None
    calibration: Mapping | None = field(default=None, repr=False)

    @cached_property
    def series(self) -> pd.DataFrame:
        """Per sweep series: rows, hardware, bound counts, critical batch range, best fraction of
        peak, range of t_lower."""
        return series_table(self.lines)


def finish(
    merged: Partial,
    hardware: list[dict],
    source_rows: int,
    rejected: int,
    problems: int,
    calibration=None,
) -> Summary:
    """The Summary of merged partials (summary.partial.merge); `hardware` holds the catalog
    records of the chips they count, `rejected` and `problems` count the input lines with a
    problem and the problems (the model's refusals included); `calibration` the one applied
    (calibration.estimate.Calibration), said in the summary."""
    counts = merged.counts
    per_hardware = bound_table(counts, "hardware")
    by_bound = counts.groupby("bound")["scenarios"].sum()
    overrides = counts.groupby("hardware")["own"].sum()
    findings = {k: v for k, v in merged.findings.items() if k not in PARTIAL_KEYS}
    fleet, curves = fleet_answer(merged.fleet)
    serving, serving_curves = serving_answer(merged.serving)
    per_op = bound_table(counts, "op")
    return Summary(
        scenarios=merged.scenarios,
        source_rows=source_rows,
        rejected_rows=rejected,
        problems=problems,
        bounds={b: int(by_bound.get(b, 0)) for b in BOUNDS},
        not_fitting=int(counts.loc[~counts["fits"].astype(bool), "scenarios"].sum()),
        per_hardware=per_hardware,
        per_op=per_op,
        overrides={h: int(overrides.get(h, 0)) for h in per_hardware.index},
        critical_batches=merged.critical,
        findings=findings,
        derated=merged.derated,
        chips=chip_table(hardware, merged.derated),
        rates_used=rates_of(merged.rates),
        lines=finished_lines(merged.lines),
        chip_lines=merged.chip_lines,
        bottom=bottom_line(merged.lines, merged.scenarios),
        fleet=fleet,
        fleet_curves=curves,
        steps=ranked_steps(merged.steps, merged.models_rows),
        steps_total=int(per_op["total"].reindex(list(TOTAL_OPS)).fillna(0).sum()),
        idle=idle_lines(merged.idle),
        serving=serving,
        serving_curves=serving_curves,
        training=training_answer(merged.training),
        grids=merged.grids,
        roofs=roofs_of(merged.grids, hardware),
        calibration=calibration_summary(calibration, merged.lines),
    )


def roofs_of(grids: Grids | None, hardware: list[dict]) -> dict[str, ChipRoofs]:
    """Per chip used: its roofs, from the grids' rates and derated rows (model.roofs)."""
    if grids is None:
        return {}
    values, derated = grids.values, grids.derated  # small: a few rows per chip
    of = lambda table, r: table[table["hardware"] == r["name"]]  # noqa: E731
    return {str(r["name"]): chip_roofs(of(values, r), of(derated, r), r) for r in hardware}


def bound_table(counts: pd.DataFrame, key: str) -> pd.DataFrame:
    """Per value of `key` (A-Z): compute-, memory-, network-bound, not fitting and total
    rows, from the counts (summary.partial.counts)."""
    n = counts["scenarios"].to_numpy(dtype=np.int64)
    unfit = ~counts["fits"].to_numpy(dtype=bool)
    keys = counts[key].astype(str)
    table = pd.DataFrame(
        {b: np.where(counts["bound"].to_numpy() == b, n, 0) for b in BOUNDS}, index=keys
    )
    table["not_fitting"] = np.where(unfit, n, 0)
    table = table.groupby(level=0).sum()
    table["total"] = table[list(BOUNDS)].sum(axis=1)
    table.index.name = key
    return table[table["total"] > 0].astype("int64").sort_index()


def chip_table(hardware: list[dict], derated: pd.DataFrame) -> pd.DataFrame:
    """One row per chip used (index hardware): the efficiencies its derated rows use most
    (1 when none is), `derated_rows` (all its derated rows), `top_rows` (those of the most
    used efficiencies), each catalog rate it has times its efficiency (`<rate>_derated`) and
    each catalog peak's ridge point on its HBM slope (`ridge_<family>`, model.roofs):
    what the report, the workbook and the notices say of a chip, computed once here."""
    names = [str(r["name"]) for r in hardware]
    first = derated.drop_duplicates("hardware").set_index("hardware")  # most used per chip
    table = pd.DataFrame(index=pd.Index(names, name="hardware"))
    for e in EFFICIENCIES:
        table[e] = first[e].reindex(names).fillna(1.0).astype(float).to_numpy()
    totals = derated.groupby("hardware")["rows"].sum() if len(derated) else pd.Series()
    table["derated_rows"] = totals.reindex(names).fillna(0).astype("int64").to_numpy()
    table["top_rows"] = first["rows"].reindex(names).fillna(0).astype("int64").to_numpy()
    for rate, e in RATE_EFFICIENCY.items():
        nominal = [_number(r.get(rate)) for r in hardware]
        table[f"{rate}_derated"] = np.asarray(nominal, dtype=float) * table[e].to_numpy()
    ridges = [catalog_ridges(r) for r in hardware]
    for f in PEAK_FAMILIES:  # each peak's ridge point on the HBM slope (NaN: none)
        table[f"ridge_{f}"] = np.asarray([_number(r.get(f)) for r in ridges], dtype=float)
    return table


def _number(value) -> float:
    return np.nan if value is None or value == "" else float(value)


def series_table(lines: pd.DataFrame) -> pd.DataFrame:
    """Per sweep series, read from the series lines (computed once for both): Summary.series."""
    columns = ["rows", "hardware", "critical_min", "critical_max", "best_fraction", "t_min",
               "t_max", *BOUNDS]  # fmt: skip
    if lines.empty:
        return pd.DataFrame(columns=columns, index=pd.Index([], name="series"))
    return lines[lines["swept"] != ""].rename(columns={"scenarios": "rows"})[columns]
