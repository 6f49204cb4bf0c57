"""Which charts a run draws, in which order, under which file names: one chart per
question (docs/outputs.md#charts): the summary, a serving chart per serve series (file order,
at most SERVING_CHARTS; and its cost chart when the run is priced), a training chart per
train series sweeping chips or tokens a step (at most TRAINING_CHARTS), a fleet chart per fleet
series (file order, at most FLEET_CHARTS), a model chart per swept transformer step (file
order, at most MODEL_CHARTS), a roofline per chip (A-Z), a network roofline per chip whose rows
communicate, then the sweep charts of the series no fleet or model chart draws (`every`:
of every series, the charts a run drew before; pipeline.charts.sweep draws any of them).
The data of a chart is built only when it is kept (`PlannedChart.build`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

import pandas as pd

from pipeline.i18n import _
from pipeline.model.roofs import ChipRoofs
from pipeline.names import slug
from pipeline.render.charts.data import RooflineData, network_data, roofline_data
from pipeline.render.charts.fleet_data import FLEET_CHARTS, fleet_data, fleet_series
from pipeline.render.charts.grid import Grids, with_grid
from pipeline.render.charts.serving_data import (
    SERVING_CHARTS,
    priced,
    serving_data,
    serving_series,
)
from pipeline.render.charts.step_sweep_data import MODEL_CHARTS, model_series, model_sweep_data
from pipeline.render.charts.summary_data import summary_data
from pipeline.render.charts.sweep_data import drawn_text, page_of, pages, sweep_data
from pipeline.render.charts.training_data import (
    TRAINING_CHARTS,
    training_data,
    training_series,
    training_title,
)
from pipeline.summary.grids import COLUMNS, FACT_COLUMNS
from pipeline.summary.turns import BYTES, SWEEP_COLUMN, LinePlan

KIND_ORDER = ("summary", "serving", "training", "fleet", "model", "roofline", "network", "sweep")
# about the milliseconds of CPU a chart of each kind takes to build, draw and encode (measured:
# a model chart 0.3-0.6 s, a serving chart 0.6 s, a fleet chart 0.1-0.5 s, a roofline 0.1-0.2
# s): the workers take the dearest first, so that the last chart drawn, which the workbook and
# the report wait for, is a cheap one
KIND_COST = {"model": 500, "fleet": 300, "serving": 600, "roofline": 150, "network": 150,
             "sweep": 150, "summary": 100, "training": 300}  # fmt: skip


@dataclass(frozen=True)
class Chart:
    """One chart of a run: what it shows and where its PNG goes."""

    kind: str  # "summary" | "serving" | "training" | "fleet" | "model" | "roofline" | ...
    title: str
    path: str  # relative to the run's folder, e.g. "plots/roofline-tpu-v5e.png"
    hardware: str | None = None  # canonical chip name, for per-hardware charts
    series: tuple[str, ...] = ()  # series drawn, for sweep, serving, fleet and model charts


@dataclass(frozen=True)
class PlannedChart:
    chart: Chart
    build: Callable[[], object]  # -> the chart's data (charts.data)
    cost: int  # about its milliseconds of CPU (KIND_COST), to hand out the dearest first


def safe_stem(text: str, limit: int = 60) -> str:
    """A file-name part from untrusted text: only [a-z0-9._-], no '..', never empty."""
    stem = slug(text, keep="._-", ascii_fold=True, one_dot=True, strip="-._", limit=limit)
    return stem or "x"


def _unique(stem: str, taken: set[str]) -> str:
    name, n = stem, 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}"
    taken.add(name)
    return name


def plan_charts(
    results: pd.DataFrame,
    hardware: list[dict],
    per_hardware: pd.DataFrame,
    overrides: Mapping[str, int],
    folder: str = "plots",
    grids: Grids | None = None,
    fleet: pd.DataFrame | None = None,
    curves: pd.DataFrame | None = None,
    steps: pd.DataFrame | None = None,
    every: bool = False,
    roofs: Mapping[str, ChipRoofs] | None = None,
    lines: Mapping[tuple[str, str], list[LinePlan]] | None = None,
    serving: pd.DataFrame | None = None,
    serving_curves: pd.DataFrame | None = None,
    training: pd.DataFrame | None = None,
) -> list[PlannedChart]:
    """Every chart a run could draw, in priority order, with unique sanitized file names.
    Planning only counts rows; each chart takes its rows when it is built. `results`: the
    rows charts draw (summary.grids.chart_frame), `roofs` their chips' (Summary.roofs),
    `lines` their sweep lines (summary.turns.sweep_lines). `grids`: every
    scenario's points binned (the Dask engine's, charts.grid), when `results` is a sample;
    `fleet`, `curves`: Summary.fleet and Summary.fleet_curves (a chart per fleet series);
    `steps`: the swept transformer steps' total rows (model_sweep_data.model_frame);
    `every`: sweep charts of every series, those a fleet or model chart draws too;
    `serving`, `serving_curves`: Summary.serving and Summary.serving_curves (a chart per
    serve series, and one of its dollars per million tokens when they are priced);
    `training`: Summary.training (a chart per train series sweeping chips or tokens a step)."""
    if results.empty:
        return []
    records = {str(h["name"]): h for h in hardware}
    full = results  # chart_frame(record): the columns and facts charts read, dims included
    results = results[[c for c in (*COLUMNS, *FACT_COLUMNS) if c in results.columns]]
    hardware = results["hardware"]
    if not isinstance(hardware.dtype, pd.CategoricalDtype):
        hardware = hardware.astype(str)
    groups = results.groupby(hardware, observed=True).indices  # by codes: no string per row
    by_chip = {str(hw): idx for hw, idx in sorted(groups.items(), key=lambda kv: str(kv[0]))}
    flops = results["has_flops"].to_numpy(dtype=bool)  # collective rows are on no roofline
    talking = results["talks"].to_numpy(dtype=bool)
    roofs = roofs or {}
    taken: set[str] = set()
    planned: list[PlannedChart] = []

    def add(kind: str, stem: str, title: str, hw, build, series=()) -> None:
        path = f"{folder}/{_unique(stem, taken)}.png"
        chart = Chart(kind, title, path, hw, tuple(series))
        planned.append(PlannedChart(chart, build, KIND_COST[kind]))

    summary = partial(summary_data, per_hardware)
    add("summary", "summary", _("Bound per hardware"), None, summary)
    served = serving_series(serving)[:SERVING_CHARTS]
    curves_of = pd.DataFrame() if serving_curves is None else serving_curves
    for name in served:  # the answer of a serve series: first after the summary
        build = partial(serving_data, serving, curves_of, name)
        title = _("{series}: tokens/s per chip against tokens/s per user", series=name)
        add("serving", f"serving-{safe_stem(name)}", title, None, build, [name])
        if priced(serving_curves):
            build = partial(serving_data, serving, curves_of, name, cost=True)
            title = _("{series}: dollars per million tokens against tokens/s per user",
                      series=name)  # fmt: skip
            add("serving", f"serving-cost-{safe_stem(name)}", title, None, build, [name])
    trained = training_series(training)[:TRAINING_CHARTS]
    for name in trained:  # a train series' step time over chips or tokens, after serving's
        build = partial(training_data, training, name)
        add("training", f"training-{safe_stem(name)}", training_title(training, name), None,
            build, [name])  # fmt: skip
    names = fleet_series(fleet)[:FLEET_CHARTS] if fleet is not None else []
    models = model_series(steps)[:MODEL_CHARTS] if steps is not None else []
    for name in names:  # every engine's Summary holds the whole answer
        build = partial(fleet_data, fleet, pd.DataFrame() if curves is None else curves, name)
        title = _("{series}: fleet ranking", series=name)
        add("fleet", f"fleet-{safe_stem(name)}", title, None, build, [name])
    for name in models:
        title = _("{series}: tokens/s and step time", series=name)
        add("model", f"model-{safe_stem(name)}", title, None,
            partial(model_sweep_data, steps, name), [name])  # fmt: skip
    for hw, idx in by_chip.items():
        if not flops[idx].any():
            continue
        build = partial(_roofline, results, idx, records.get(hw, {"name": hw}), roofs.get(hw),
                        overrides.get(hw, 0), grids)  # fmt: skip
        title = _("{chip} roofline", chip=hw)
        add("roofline", f"roofline-{safe_stem(hw)}", title, hw, build)
    for hw, idx in by_chip.items():
        if talking[idx].any():
            build = partial(_network, results, idx, records.get(hw, {"name": hw}), roofs.get(hw),
                            grids)  # fmt: skip
            title = _("{chip} network roofline", chip=hw)
            add("network", f"network-{safe_stem(hw)}", title, hw, build)
    drawn = frozenset() if every else _drawn_elsewhere(full, {*names, *models, *served, *trained})
    for (hw, dim), all_lines in sorted((lines or {}).items()):
        kept = [ln for ln in all_lines if ln.series not in drawn]
        split = pages(kept) if kept else []
        for i, page in enumerate(split, start=1):
            part = f"-{i}" if len(split) > 1 else ""
            of = page_of(i, len(split)) + drawn_text(page)
            rows = full[list(dict.fromkeys([*results.columns, SWEEP_COLUMN.get(dim, dim)]))]
            build = partial(sweep_data, rows, records.get(hw, {"name": hw}), roofs.get(hw), dim,
                            page, i, len(split))  # fmt: skip
            series = dict.fromkeys(ln.series for ln in page)
            stem = f"sweep-{safe_stem(hw)}-{dim.lower()}{part}"
            title = (
                _("{chip}: collective time vs {dim}", chip=hw, dim=dim)
                if dim == BYTES
                else _("{chip}: attainable FLOP/s vs {dim}", chip=hw, dim=dim)
            )
            add("sweep", stem, title + of, hw, build, series)
    return planned


def _drawn_elsewhere(full: pd.DataFrame, own: set[str]) -> frozenset[str]:
    """The series a chart of their own draws (`own`: fleet and model charts' series), and
    the ops of those that are steps (`step/op`, in_step): no sweep chart repeats them."""
    if not own:
        return frozenset()
    in_step = full["series"][full["in_step"].to_numpy(dtype=bool)].unique()
    ops = {str(s) for s in in_step if str(s).rpartition("/")[0] in own}
    return frozenset(own | ops)


def _roofline(results, idx, chip, roofs, overridden, grids) -> RooflineData:
    data = roofline_data(results.iloc[idx], chip, roofs.hbm, overridden)
    return data if grids is None else with_grid(data, grids)


def _network(results, idx, chip, roofs, grids) -> RooflineData | None:
    data = network_data(results.iloc[idx], chip, roofs.network)
    return data if grids is None or data is None else with_grid(data, grids)


def fleet_cap_notice(fleet: pd.DataFrame) -> str | None:
    """What the cap on fleet charts left out, said plainly (None when nothing)."""
    names = fleet_series(fleet)
    if len(names) <= FLEET_CHARTS:
        return None
    return _(
        "Drew fleet charts of the first {shown} of {total} fleet series (at most {shown} a "
        "run); every series' ranking is in summary.json.",
        shown=FLEET_CHARTS,
        total=f"{len(names):,}",
    )


def left_out_notice(dropped: list[PlannedChart], max_charts: int, total: int) -> str:
    """What the chart limit left out, said plainly."""
    by_kind: dict[str, int] = {}
    for p in dropped:
        by_kind[p.chart.kind] = by_kind.get(p.chart.kind, 0) + 1
    parts = [_kind_count(k, n) for k in KIND_ORDER if (n := by_kind.get(k, 0))]
    what = (
        parts[0]
        if len(parts) == 1
        else _("{first} and {last}", first=", ".join(parts[:-1]), last=parts[-1])
    )
    names = ""
    if len(dropped) <= 5:
        names = " (" + ", ".join(p.chart.path.rsplit("/", 1)[-1] for p in dropped) + ")"
    return _(
        "Drew {drawn} of {total} charts (chart limit {limit}, --max-charts); left out "
        "{what}{names}.",
        drawn=f"{total - len(dropped):,}",
        total=f"{total:,}",
        limit=f"{max_charts:,}",
        what=what,
        names=names,
    )


def _kind_count(kind: str, n: int) -> str:
    """'1 roofline', '3 sweep charts' in the current language."""
    c = f"{n:,}"
    if n == 1:
        return {
            "summary": _("{n} summary chart", n=c),
            "serving": _("{n} serving chart", n=c),
            "training": _("{n} training chart", n=c),
            "fleet": _("{n} fleet chart", n=c),
            "model": _("{n} model chart", n=c),
            "roofline": _("{n} roofline", n=c),
            "network": _("{n} network roofline", n=c),
            "sweep": _("{n} sweep chart", n=c),
        }[kind]
    return {
        "summary": _("{n} summary charts", n=c),
        "serving": _("{n} serving charts", n=c),
        "training": _("{n} training charts", n=c),
        "fleet": _("{n} fleet charts", n=c),
        "model": _("{n} model charts", n=c),
        "roofline": _("{n} rooflines", n=c),
        "network": _("{n} network rooflines", n=c),
        "sweep": _("{n} sweep charts", n=c),
    }[kind]
