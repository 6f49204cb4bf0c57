"""Every statistic of a run as partial -> merge -> finish (the pattern of Dask's own
reductions: chunk, combine, aggregate). `partial` reduces one frame of results to small
tables; `merge` combines the partials of consecutive frames, in file order, into the partial
of all their rows; summary.finish.finish turns one into the Summary every output reads. The
local engine is a run of one frame, `finish(merge([partial(rows)]))`; the Dask engine's
client merges its partitions' partials with the same merge and finish (docs/api.md).

`computed` is where both engines turn scenario rows into results: the model, then the one
refusal rule for the rows it cannot compute (model.overflow.refusals), then the partial."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.calibration.estimate import with_estimate
from pipeline.model.cost import with_costs
from pipeline.model.dtypes import DTYPE_COLUMNS, DTYPES
from pipeline.model.groups import BLOCK, STEP_OF, expand_groups
from pipeline.model.overflow import merge_refused, refusals
from pipeline.model.roofline import BOUNDS, EFFICIENCIES, compute_record
from pipeline.model.roofs import RATE_KEYS
from pipeline.model.serve import expand_serve
from pipeline.model.serve_totals import with_serve_totals
from pipeline.model.step_totals import STEP_ROWS, top_rows, with_step_totals
from pipeline.model.train import with_training
from pipeline.model.transformer import expand_steps
from pipeline.summary.codes import bound_codes_of, column_codes, fits
from pipeline.summary.findings import merge_findings, partial_findings
from pipeline.summary.fleet import fleet_rows, merge_fleet
from pipeline.summary.grids import Grids, chart_grids
from pipeline.summary.idle import idle_chips, merge_idle
from pipeline.summary.series import chip_lines, merge_chip_lines, merge_lines, series_lines
from pipeline.summary.serve_batch import with_serve_batch
from pipeline.summary.serving import merge_serving, serving_rows
from pipeline.summary.steps import merge_steps, step_table
from pipeline.summary.training import merge_training, training_rows
from pipeline.words import dtype_labels

COUNT_KEYS = ["hardware", "op", "bound", "fits"]
CRITICAL_COLUMNS = ["hardware", "op", "dtypes", "low", "high"]


@dataclass(frozen=True)
class Partial:
    """What one frame of results (or several merged) adds up to; every table small but
    `lines` (one row per series)."""

    scenarios: int
    counts: pd.DataFrame  # COUNT_KEYS, scenarios, own (rows giving their own numbers)
    lines: pd.DataFrame  # summary.series.series_lines
    chip_lines: pd.DataFrame  # per sweep series and chip: summary.series.chip_lines
    critical: pd.DataFrame  # per series, chip and dtypes: CRITICAL_COLUMNS (index series)
    findings: dict  # summary.findings.partial_findings
    derated: pd.DataFrame  # per chip and efficiencies: rows (derated_table)
    refused: pd.DataFrame  # per input line: model.overflow.refusals' table
    fleet: pd.DataFrame  # fleet series' rows at their chosen points (summary.fleet)
    rates: pd.DataFrame  # distinct (chip, peak family or link) pairs: rate_pairs
    steps: pd.DataFrame  # the Models table's candidate total rows: summary.steps.step_table
    idle: pd.DataFrame  # per input line: its idle chips and rows (summary.idle.idle_chips)
    serving: pd.DataFrame  # per serve point: its configuration and figures (summary.serving)
    training: pd.DataFrame  # per train row: its configuration and figures (summary.training)
    grids: Grids | None = None  # the charts' binned points (only when asked: summary.grids)
    models_rows: int = STEP_ROWS  # the most steps the Models table lists (summary.steps)


def computed(
    frame: pd.DataFrame,
    *,
    grids: bool = False,
    calibration=None,
    models_rows: int = STEP_ROWS,
    prices=None,
):
    """The results and facts of scenario rows `frame` (the rows the model refuses left out),
    their Partial and which of `frame`'s rows they keep; `grids`: bin the points for charts
    drawn from a sample; `calibration` (calibration.estimate.Calibration): add each row's
    estimate; `models_rows`: the most steps the Models table lists (summary.steps);
    `prices` (USD per chip-hour by chip, catalogs.prices): add each row's cost."""
    given = frame
    frame = expand_groups(frame)  # a group: per point its total row, then its rows
    frame = expand_serve(with_serve_batch(frame, calibration))  # a serve row: its B, steps
    frame = expand_steps(frame)  # a transformer step: its total row, then its ops' rows
    results, facts = with_training(*compute_record(frame), frame)  # a train row: its step
    results = with_step_totals(with_estimate(results, calibration, facts), frame)
    results = with_serve_totals(results, frame)  # a serve row: TTFT, TPOT, tokens/s
    results = with_costs(results, frame, prices)  # energy and cost at each row's time
    top = top_rows(results, frame)
    keep, refused = refusals(frame, results)
    if frame is not given:  # a step or group point with a refused row is refused whole
        block = frame[BLOCK].to_numpy()
        keep = keep & ~np.isin(block, block[~keep & (block >= 0)])
        given_keep = np.ones(len(given), dtype=bool)
        given_keep[frame[STEP_OF].to_numpy()[~keep]] = False
    else:
        given_keep = keep
    own = frame["own_numbers"].to_numpy(dtype=bool)
    if not keep.all():
        results = results[keep].reset_index(drop=True)
        facts = facts[keep].reset_index(drop=True)
        own = own[keep]
        if top is not None:  # a step or group is kept whole: its top row with it
            top = np.where(top >= 0, (np.cumsum(keep) - 1)[np.maximum(top, 0)], -1)[keep]
    part = partial(results, facts, own, refused, grids=grids, top=top, idle=idle_chips(given),
                   models_rows=models_rows)  # fmt: skip
    return results, facts, part, given_keep


def partial(
    results: pd.DataFrame,
    facts: pd.DataFrame,
    own: np.ndarray,
    refused: pd.DataFrame,
    *,
    grids: bool = False,
    top: np.ndarray | None = None,
    idle: pd.DataFrame | None = None,
    models_rows: int = STEP_ROWS,
) -> Partial:
    """The Partial of one frame of results and its facts (row for row); `own` marks the
    rows giving their own peak, HBM or link numbers, `refused` the frame's refused rows,
    `top` each total's top row (model.step_totals.top_rows), `idle` the frame's idle chips,
    `models_rows` the most steps the Models table lists."""
    collective = (facts["kind"] == "collective").to_numpy(dtype=bool)
    series = pd.factorize(results["series"].astype(str))  # once for every statistic
    floor = facts["latency_floor"].to_numpy(dtype=float)  # a collective's (the findings')
    return Partial(
        scenarios=len(results),
        counts=counts(results, own),
        lines=series_lines(results, facts, series),
        chip_lines=chip_lines(results, facts),
        critical=critical_batches(results, series[0]),
        findings=partial_findings(results, collective, series, _in_step(facts), floor),
        derated=derated_table(results),
        refused=refused,
        fleet=fleet_rows(results, facts),
        rates=rate_pairs(results),
        steps=step_table(results, top, models_rows),
        idle=idle_chips(pd.DataFrame()) if idle is None else idle,
        serving=serving_rows(results),
        training=training_rows(results, series),
        grids=chart_grids(pd.concat([results, facts], axis=1)) if grids else None,
        models_rows=models_rows,
    )


def _in_step(facts: pd.DataFrame) -> np.ndarray | None:
    """The rows of transformer steps (their series recur through the file), if any."""
    if "in_step" not in facts.columns:
        return None
    mask = facts["in_step"].to_numpy(dtype=bool)
    return mask if mask.any() else None


def merge(parts: list[Partial]) -> Partial:
    """The Partial of consecutive frames' rows (`parts` in file order, at least one)."""
    if len(parts) == 1:
        return parts[0]
    grids = [p.grids for p in parts if p.grids is not None]
    models_rows = max(p.models_rows for p in parts)
    return Partial(
        scenarios=sum(p.scenarios for p in parts),
        counts=_sum([p.counts for p in parts], COUNT_KEYS, ["scenarios", "own"]),
        lines=merge_lines([p.lines for p in parts]),
        chip_lines=merge_chip_lines([p.chip_lines for p in parts]),
        critical=_merge_critical([p.critical for p in parts]),
        findings=merge_findings([p.findings for p in parts]),
        derated=derated_order(_sum([p.derated for p in parts], DERATED_KEYS, ["rows"])),
        refused=merge_refused([p.refused for p in parts]),
        fleet=merge_fleet([p.fleet for p in parts]),
        rates=pd.concat([p.rates for p in parts], ignore_index=True).drop_duplicates(),
        steps=merge_steps([p.steps for p in parts], [p.scenarios for p in parts], models_rows),
        idle=merge_idle([p.idle for p in parts]),
        serving=merge_serving([p.serving for p in parts]),
        training=merge_training([p.training for p in parts]),
        grids=sum(grids[1:], grids[0]) if grids else None,
        models_rows=models_rows,
    )


def chips_counted(part: Partial) -> list[str]:
    """The chips the scenarios of a Partial use, A-Z."""
    return sorted(set(part.counts["hardware"].astype(str)))


def _sum(tables: list[pd.DataFrame], keys: list[str], values: list[str]) -> pd.DataFrame:
    """Rows with the same keys added up, in order of first appearance (an empty table, of
    a frame with none, adds nothing, not even its untyped columns)."""
    given, tables = tables, [t for t in tables if len(t)]
    if len(tables) <= 1:
        return tables[0] if tables else given[0]
    both = pd.concat(tables, ignore_index=True)
    return both.groupby(keys, sort=False, as_index=False)[values].sum()


def counts(results: pd.DataFrame, own: np.ndarray) -> pd.DataFrame:
    """Scenarios per hardware, op, bound and fit, and of them those giving their own numbers
    (one bincount over the keys' codes: no per-row Python work)."""
    hw, chips = column_codes(results["hardware"])
    op, ops = column_codes(results["op"])
    bound, fit = bound_codes_of(results), fits(results).astype(np.intp)
    sizes = (len(chips), len(ops), len(BOUNDS), 2)
    key = np.ravel_multi_index((hw, op, bound, fit), sizes) if len(results) else hw
    total = np.bincount(key, minlength=int(np.prod(sizes)))
    mine = np.bincount(key, weights=np.asarray(own, dtype=float), minlength=len(total))
    where = np.flatnonzero(total)
    h, o, b, f = np.unravel_index(where, sizes)
    return pd.DataFrame(
        {
            "hardware": np.asarray(chips, dtype=object)[h],
            "op": np.asarray(ops, dtype=object)[o],
            "bound": np.asarray(BOUNDS, dtype=object)[b],
            "fits": f.astype(bool),
            "scenarios": total[where].astype(np.int64),
            "own": mine[where].astype(np.int64),
        }
    )


def critical_batches(results: pd.DataFrame, series: np.ndarray | None = None) -> pd.DataFrame:
    """Per series with a critical batch, in file order: hardware, op, dtypes, lowest and
    highest critical batch; a fleet series (docs/input.md#sweeping-the-fleet) a row per chip
    and dtypes it sweeps, as the batch that pays differs by chip. `series`: the rows' series
    codes, when known."""
    batch = results["critical_batch"]
    has = batch.notna().to_numpy()
    if not has.any():
        return pd.DataFrame(columns=CRITICAL_COLUMNS, index=pd.Index([], name="series"))
    rows = results.loc[has, ["series", "hardware", "op", *DTYPE_COLUMNS]]
    values = batch.to_numpy(dtype=float, na_value=np.nan)[has]
    if series is None:
        series = pd.factorize(results["series"])[0]
    if len(results) and series.max() + 1 == len(results):  # every series one row: its own
        first, low, high = rows, values, values
    else:
        key = series[has].astype(np.int64)  # series, chip and dtypes as one whole number
        for c in ("hardware", *DTYPE_COLUMNS):
            column = rows[c]
            if isinstance(column.dtype, pd.CategoricalDtype):
                part, size = column.cat.codes.to_numpy(), len(column.cat.categories)
            else:
                part, uniques = pd.factorize(column)
                size = len(uniques)
            key = key * (size + 1) + part
        codes, _ = pd.factorize(key)  # in order of first appearance
        order = np.argsort(codes, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
        first = rows.iloc[order[starts]]
        low = np.minimum.reduceat(values[order], starts)
        high = np.maximum.reduceat(values[order], starts)
    return pd.DataFrame(
        {
            "hardware": _category(first["hardware"]),
            "op": _category(first["op"]),
            "dtypes": pd.Categorical(dtype_labels(*(first[c] for c in DTYPE_COLUMNS))),
            "low": low.astype(np.int64),
            "high": high.astype(np.int64),
        },
        index=pd.Index(first["series"].astype(str).array, name="series"),
    )


def _category(column: pd.Series) -> pd.Categorical:
    """A column as a Categorical of its text (a categorical one as it is: no string per row)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.array.remove_unused_categories()
    return pd.Categorical(column.astype(str))


def _merge_critical(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """critical_batches of consecutive frames as those of all their rows."""
    tables = [t for t in tables if len(t)]
    if len(tables) <= 1:
        return tables[0] if tables else critical_batches(pd.DataFrame({"critical_batch": []}))
    text = ["hardware", "op", "dtypes"]
    both = pd.concat(tables).astype(dict.fromkeys(text, str))
    grouped = both.groupby([both.index.rename("series"), *text], sort=False)
    out = pd.DataFrame({"low": grouped["low"].min(), "high": grouped["high"].max()})
    out = out.reset_index(level=[1, 2, 3])[CRITICAL_COLUMNS]
    return out.astype(dict.fromkeys(text, "category"))  # as critical_batches gives them


DERATED_KEYS = ["hardware", *EFFICIENCIES]


def derated_table(results: pd.DataFrame) -> pd.DataFrame:
    """Rows timed at less than a nominal rate: per chip and distinct efficiencies (compute,
    HBM, network) the rows using them, most used first per chip (derated_order)."""
    none = pd.DataFrame({"hardware": pd.Series([], dtype=object),
                         **{e: pd.Series([], dtype=float) for e in EFFICIENCIES},
                         "rows": pd.Series([], dtype=np.int64)})  # fmt: skip
    if not set(EFFICIENCIES) <= set(results.columns):
        return none
    values = results[list(EFFICIENCIES)].to_numpy(dtype=float, na_value=1.0)
    derated = (values < 1).any(axis=1)
    if not derated.any():
        return none
    rows = pd.DataFrame(values[derated], columns=list(EFFICIENCIES))
    rows.insert(0, "hardware", results["hardware"].astype(str).to_numpy()[derated])
    return derated_order(rows.value_counts(sort=False).rename("rows").reset_index())


def derated_order(table: pd.DataFrame) -> pd.DataFrame:
    """Derated rows as Summary.derated lists them: per chip (A-Z), the most used first."""
    table = table.sort_values(["hardware", "rows"], ascending=[True, False], kind="stable")
    return table.reset_index(drop=True)[[*DERATED_KEYS, "rows"]]


def rate_pairs(results: pd.DataFrame) -> pd.DataFrame:
    """The distinct (chip, rate) pairs of the rows, RATE_KEYS: kind "peak" with each peak
    family they compute in ('' for none), "link" with each link the rows with a collective
    send over. On the columns' codes (no per-row Python work); merged by union (rates_of)."""
    hw, chips = column_codes(results["hardware"])
    dt, dtypes = column_codes(results["compute_dtype"])
    families = np.array([*(DTYPES[d][2] if d in DTYPES else "" for d in dtypes), ""], object)
    peaks = np.unique(hw.astype(np.int64) * (len(dtypes) + 1) + dt + 1)
    ln, links = column_codes(results["link"])
    talking = (results["collective"] != "").to_numpy(dtype=bool) & (ln >= 0)
    sent = np.unique(hw[talking].astype(np.int64) * max(len(links), 1) + ln[talking])
    names = np.asarray(chips, dtype=object)
    table = pd.DataFrame(
        {
            "hardware": [*names[peaks // (len(dtypes) + 1)], *names[sent // max(len(links), 1)]],
            "kind": ["peak"] * len(peaks) + ["link"] * len(sent),
            "rate": [
                *families[peaks % (len(dtypes) + 1) - 1],
                *np.asarray(links, dtype=object)[sent % max(len(links), 1)],
            ],
        },
        columns=RATE_KEYS,
    )
    return table.drop_duplicates(ignore_index=True)
