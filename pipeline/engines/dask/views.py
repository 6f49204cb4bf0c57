"""A Dask run's report.html, workbook.xlsx and charts (docs/outputs.md#the-dask-engine): the
local engine's own renderers, given a Record whose Summary is summary.finish.finish of every
partition's Partial merged, and whose rows are a sample the client computes from the plan
(engines.dask.sample), so they look as a local run's and say how many partitions and scenarios
they summarize."""

from __future__ import annotations

from dataclasses import replace

from pipeline.catalogs.hardware import Catalog
from pipeline.catalogs.prices import Prices, price_warnings
from pipeline.engines.dask.sample import sample_plan
from pipeline.i18n import _
from pipeline.model.overflow import refused_problems
from pipeline.record import Record, record_of
from pipeline.render import format as fmt
from pipeline.render.text.answer import scenarios_text
from pipeline.run.baseline import PARTS
from pipeline.scenarios import Loaded
from pipeline.scenarios.refused import with_problems
from pipeline.summary.partial import Partial, chips_counted, computed

ROWS_IN = f"results/{PARTS}"  # where a Dask run's every scenario is


def dask_record(
    partials,
    loaded: Loaded,
    catalog: Catalog,
    warnings: tuple[str, ...],
    started: str,
    timings: dict[str, float],
    calibration=None,
    prices: Prices | None = None,
) -> tuple[Record, Partial]:
    """The record a Dask run's report, workbook and charts are drawn from (see the module),
    and the merged Partial of every partition. `partials(empty)` merges the partitions'
    Partials (engines.dask.merge.Merged.partial), `empty` for a run with none. Its problems are
    the file's and the model's refusals, in line order. `calibration`, `prices` (its price
    file read, catalogs.prices): the run's, or None; a chip without a price is a warning, as in
    a local run."""
    sample = sample_plan(loaded.planned)
    usd = None if prices is None else prices.usd_per_chip_hour
    # the workers' refusals too
    results, facts, empty, _ = computed(
        sample.rows(0, sample.total), calibration=calibration, prices=usd
    )
    merged = partials(empty)
    warnings = (*warnings, *price_warnings(prices, chips_counted(merged)))
    problems = with_problems(loaded.problems, refused_problems(loaded.source, merged.refused))
    record = record_of(
        Record, merged, replace(loaded, problems=problems), catalog, calibration, warnings,
        started=started, timings=timings, _results=results, _facts=facts, rows_in=ROWS_IN,
        sampled=len(results) < merged.scenarios,
        prices=None if prices is None else (str(prices.path or prices.label), prices.sha256),
    )  # fmt: skip
    return record, merged


def dask_notice(record: Record, partitions: int) -> str:
    """What the report and the workbook say first of a Dask run: what they summarize."""
    s = record.summary
    head = (
        _("Computed by the Dask engine in {n} partition: {scenarios}, every one in {rows}.")
        if partitions == 1
        else _("Computed by the Dask engine in {n} partitions: {scenarios}, every one in {rows}.")
    )
    head = head.format(
        n=fmt.count(partitions),
        scenarios=scenarios_text(s.scenarios),
        rows=ROWS_IN,
    )
    if not record.sampled:
        return head
    return _(
        "{head} The counts, series, critical batches, findings and the rooflines' density "
        "cover all {total}; the scenario tables, the Results sheet, the sweep charts and "
        "their tables show a sample of {sample}, spread over each sweep (evenly, and on a log "
        "scale over long ranges; first and last values kept).",
        head=head,
        total=fmt.count(s.scenarios),
        sample=fmt.count(len(record.results)),
    )  # fmt: skip
