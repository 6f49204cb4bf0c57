"""A Dask run's report.html, workbook.xlsx and charts (docs/outputs.md#the-dask-engine): the
local engine's own renderers, given a Record whose Summary is merged from every partition
(counts, series lines, critical batches, findings, derated rows and the rooflines' grids)
and whose rows are a sample the client computes from the plan (engine.sample), so they look
as a local run's and say how many partitions and scenarios they summarize."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import pandas as pd

from pipeline.engine.findings import merge_findings
from pipeline.engine.merge import Merged
from pipeline.engine.sample import sample_plan
from pipeline.model.catalog import Catalog, catalog_records
from pipeline.model.overflow import refused_rows
from pipeline.model.roofline import BOUNDS, EFFICIENCIES, compute_record
from pipeline.model.series import bottom_line
from pipeline.model.summary import Summary, chip_table, derated_order, findings
from pipeline.record import Record, provenance
from pipeline.render import format as fmt
from pipeline.scenarios import Loaded

ROWS_IN = "results/part-*.parquet"  # where a Dask run's every scenario is


@dataclass(frozen=True, eq=False)
class MergedSummary(Summary):
    """A Summary merged from partitions: its findings merged too (engine.findings), never
    worked out from the rows it holds (a sample), and the rooflines' grids (charts.grid)."""

    merged_findings: Mapping = field(default_factory=dict, repr=False)
    grids: object = field(default=None, repr=False)

    @cached_property
    def findings(self) -> dict:
        return dict(self.merged_findings)


def dask_record(
    merged: Merged,
    loaded: Loaded,
    catalog: Catalog,
    problems: tuple,
    warnings: tuple[str, ...],
    started: str,
    timings: dict[str, float],
) -> Record:
    """The record a Dask run's report, workbook and charts are drawn from (see the module)."""
    sample = sample_plan(loaded.planned)
    frame = sample.rows(0, sample.total)
    results, facts = compute_record(frame)
    keep = np.ones(len(results), dtype=bool)
    keep[refused_rows(results).index.to_numpy()] = False  # the workers refused them too
    results, facts = results[keep].reset_index(drop=True), facts[keep].reset_index(drop=True)
    counts = merged.counts if merged.counts is not None else _no_counts()
    used = sorted(set(counts["hardware"]) | set(results["hardware"].astype(str)))
    records = tuple(catalog_records(catalog, used))
    derated = _derated(merged.derated)
    lines = merged.series_lines()
    parts = [merged.findings[k] for k in sorted(merged.findings)]
    per_hardware = _bound_table(counts, "hardware")
    overrides = counts.groupby("hardware")["own"].sum()
    summary = MergedSummary(
        scenarios=merged.rows,
        source_rows=loaded.source_rows,
        rejected_rows=len({p.line for p in problems}),
        problems=len(problems),
        bounds={b: int(counts.loc[counts["bound"] == b, "scenarios"].sum()) for b in BOUNDS},
        not_fitting=int(counts.loc[~counts["fits"].astype(bool), "scenarios"].sum()),
        per_hardware=per_hardware,
        per_op=_bound_table(counts, "op"),
        overrides={h: int(overrides.get(h, 0)) for h in per_hardware.index},
        critical_batches=merged.critical_batches(),
        _results=results,
        _facts=facts,
        derated=derated,
        chips=chip_table(list(records), derated),
        lines=lines,
        bottom=bottom_line(lines, merged.rows),
        merged_findings=merge_findings(parts, merged.rows) if parts else _findings(results, facts),
        grids=merged.grids,
    )  # fmt: skip
    return Record(
        **provenance(loaded, catalog.version),
        started=started,
        hardware=records,
        summary=summary,
        warnings=warnings,
        timings=timings,
        _loaded=replace(loaded, problems=tuple(problems)),
        _results=results,
        _facts=facts,
        rows_in=ROWS_IN,
        sampled=len(results) < merged.rows,
    )


def dask_notice(record: Record, partitions: int) -> str:
    """What the report and the workbook say first of a Dask run: what they summarize."""
    s = record.summary
    head = (
        f"Computed by the Dask engine in {fmt.plural(partitions, 'partition')}: "
        f"{fmt.plural(s.scenarios, 'scenario')}, every one in {ROWS_IN}."
    )
    if not record.sampled:
        return head
    return (
        f"{head} The counts, series, critical batches, findings and the rooflines' density "
        f"cover all {fmt.count(s.scenarios)}; the scenario tables, the Results sheet and the "
        f"sweep charts show a sample of {fmt.count(len(record.results))}, spread over each "
        "sweep (evenly, and on a log scale over long ranges; first and last values kept)."
    )


def _findings(results: pd.DataFrame, facts: pd.DataFrame) -> dict:
    """The findings of a run with no partition (no scenario): its empty results'."""
    return findings(results, (facts["kind"] == "collective").to_numpy())


def _no_counts() -> pd.DataFrame:
    return pd.DataFrame(
        {"hardware": [], "op": [], "bound": [], "fits": [], "scenarios": [], "own": []}
    ).astype({"hardware": str, "op": str, "bound": str, "fits": bool, "scenarios": "int64",
              "own": "int64"})  # fmt: skip


def _bound_table(counts: pd.DataFrame, key: str) -> pd.DataFrame:
    """model.summary.bound_counts, from the merged counts: per value of `key`, rows per
    bound, not fitting and in total."""
    table = counts.pivot_table(index=key, columns="bound", values="scenarios", aggfunc="sum")
    table = table.reindex(columns=list(BOUNDS)).fillna(0)
    table.columns.name = None
    unfit = counts[~counts["fits"].astype(bool)].groupby(key)["scenarios"].sum()
    table["not_fitting"] = unfit.reindex(table.index).fillna(0)
    table["total"] = table[list(BOUNDS)].sum(axis=1)
    table.index = table.index.astype(str).rename(key)
    return table[table["total"] > 0].astype("int64").sort_index()


def _derated(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """model.summary.derated_table over every partition's."""
    columns = ["hardware", *EFFICIENCIES, "rows"]
    if not tables:
        return pd.DataFrame(columns=columns)
    both = pd.concat(tables, ignore_index=True)
    return derated_order(both.groupby(columns[:-1], sort=False, as_index=False)["rows"].sum())
