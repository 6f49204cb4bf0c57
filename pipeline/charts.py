"""Each chart of an analysis as a matplotlib Figure, for a notebook to show inline
(`pipeline.charts.roofline(a, "tpu-v5e")`); `pipeline run` writes the same charts as PNGs.
`chips()` needs no analysis: catalog chips' rooflines side by side. Each takes `lang=`
("en", "ko"; None: the current language, pipeline.i18n) for its titles, axes and legends."""

from __future__ import annotations

from dataclasses import replace

from matplotlib.figure import Figure

from pipeline.api.analyze import Analysis
from pipeline.catalogs.chips import chips as chips_table
from pipeline.catalogs.chips import peak_dtype
from pipeline.catalogs.hardware import did_you_mean
from pipeline.catalogs.spellings import alias_map, spelling
from pipeline.errors import UnknownHardware, UnknownSeries, described, quoted
from pipeline.i18n import _, use_lang
from pipeline.render import format as fmt
from pipeline.render.charts import Chart, figure
from pipeline.render.charts.chips import chips_figure
from pipeline.render.charts.chips_data import chips_data
from pipeline.render.charts.data import network_data, roofline_data
from pipeline.render.charts.fleet_data import fleet_data, fleet_series
from pipeline.render.charts.grid import with_grid
from pipeline.render.charts.labels import rows_text
from pipeline.render.charts.plan import plan_charts
from pipeline.render.charts.serving_data import priced, serving_data, serving_series
from pipeline.render.charts.step_sweep_data import model_frame, model_series, model_sweep_data
from pipeline.render.charts.summary_data import summary_data
from pipeline.render.charts.sweep_data import pages, sweep_data
from pipeline.render.charts.training_data import training_data
from pipeline.summary.grids import chart_frame
from pipeline.summary.turns import sweep_lines

__all__ = [
    "chips", "fleet", "model", "network", "planned", "roofline", "serving", "summary", "sweep",
    "training",
]  # fmt: skip


def summary(analysis: Analysis, *, lang: str | None = None) -> Figure:
    """Compute-, memory- and network-bound scenarios per hardware, as stacked bars (when no
    scenario was computed, a figure saying so)."""
    with use_lang(lang):
        s = _analysis(analysis).summary
        data = summary_data(s.per_hardware)
        if not data.hardware:
            n = s.rejected_rows
            note = (
                _("no scenarios to chart: {rows} rejected (see .problems)", rows=rows_text(n))
                if n
                else _("no scenarios to chart")
            )
            data = replace(data, note=note)
        return figure(data)


def roofline(analysis: Analysis, hardware: str, *, lang: str | None = None) -> Figure:
    """The HBM roofline of one chip: every scenario at its intensity and attainable FLOP/s
    (collective rows, which do no FLOPs, are on the sweep chart of their bytes); its counts
    and density from the whole run's grid (Summary.grids), on either engine."""
    with use_lang(lang):
        name, rows, chip = _chip(analysis, hardware)
        if not rows["has_flops"].any():
            raise UnknownHardware(
                f"no scenario on {name} does FLOPs (collectives only); see sweep()"
            )
        roofs = analysis.summary.roofs[name].hbm
        data = roofline_data(rows, chip, roofs, analysis.summary.overrides.get(name, 0))
        return figure(with_grid(data, analysis.summary.grids))


def network(analysis: Analysis, hardware: str, *, lang: str | None = None) -> Figure:
    """The network roofline of one chip's multi-chip rows that communicate."""
    with use_lang(lang):
        name, rows, chip = _chip(analysis, hardware)
        data = network_data(rows, chip, analysis.summary.roofs[name].network)
        if data is None:
            raise UnknownHardware(f"no scenario on {name} sends data between chips")
        return figure(with_grid(data, analysis.summary.grids))


def sweep(
    analysis: Analysis,
    hardware: str,
    dim: str | None = None,
    page: int = 1,
    *,
    lang: str | None = None,
) -> Figure:
    """Attainable FLOP/s against a swept dim on one chip, a line per series (the book's Q3
    figure), or a collective's time against its swept `bytes`; `dim` defaults to the chip's
    first swept dim, `page` to the first ten lines."""
    with use_lang(lang):
        if dim is not None and not isinstance(dim, str):
            raise TypeError(f"dim must be a dim's letter (str) or None, not {described(dim)}")
        if isinstance(page, bool) or not isinstance(page, int):
            raise TypeError(f"page must be a whole number (int), not {described(page)}")
        name, _rows, chip = _chip(analysis, hardware)
        results = chart_frame(analysis)
        swept = {d: lines for (hw, d), lines in sweep_lines(results).items() if hw == name}
        if not swept:
            raise UnknownHardware(f"no sweep runs on {name}")
        dim = (dim.lower() if dim.lower() == "bytes" else dim.upper()) if dim else sorted(swept)[0]
        if dim not in swept:
            raise UnknownHardware(f"no sweep on {name} varies {dim} (swept: {', '.join(swept)})")
        split = pages(swept[dim])
        if not 1 <= page <= len(split):
            raise ValueError(f"page must be 1 to {len(split)}, not {page}")
        roofs = analysis.summary.roofs[name]
        return figure(sweep_data(results, chip, roofs, dim, split[page - 1], page, len(split)))


def fleet(analysis: Analysis, series: str, *, lang: str | None = None) -> Figure:
    """A fleet series' points (chip x precision x chip count) as lines of time along its
    sweep, the legend ranked fastest first at its critical batch; a series that sweeps only
    its fleet axes as bars of its ranking."""
    with use_lang(lang):
        s = _analysis(analysis).summary
        what = "a fleet series (a row listing several chips, dtypes or chip counts)"
        _one_of(analysis, series, fleet_series(s.fleet), what, "fleet series")
        return figure(fleet_data(s.fleet, s.fleet_curves, series))


def model(analysis: Analysis, series: str, *, lang: str | None = None) -> Figure:
    """A transformer step swept over B or S: tokens per second and step time side by side,
    a line per chip, the points that do not fit in HBM hollow and the largest batch that fits
    marked."""
    with use_lang(lang):
        _analysis(analysis)
        _named(series)
        steps = model_frame(analysis)
        what = "a transformer step swept over B or S (a row of op transformer with a B or S sweep)"
        _one_of(analysis, series, model_series(steps), what, "swept steps", "swept step")
        return figure(model_sweep_data(steps, series))


def serving(
    analysis: Analysis, series: str, *, cost: bool = False, lang: str | None = None
) -> Figure:
    """A serve series' configurations as lines over B: tokens/s per chip against tokens/s per
    user, the TPOT target drawn and the front of the points meeting the targets marked;
    `cost`: dollars per million tokens in place of tokens/s per chip (a run with prices)."""
    with use_lang(lang):
        s = _analysis(analysis).summary
        what = "a serve series (a row of op serve)"
        _one_of(analysis, series, serving_series(s.serving), what, "serve series")
        if cost and not priced(s.serving_curves):
            raise ValueError("cost=True needs prices: analyze(..., prices=FILE) or --prices")
        return figure(serving_data(s.serving, s.serving_curves, series, cost=cost))


def training(analysis: Analysis, series: str, *, lang: str | None = None) -> Figure:
    """A train series' step time against the chip count (or the tokens a step, whichever it
    sweeps), a line per configuration (chip, precision, parallelism), each line's compute-bound
    threshold marked: where its tokens a chip equal the batch its communication needs."""
    with use_lang(lang):
        s = _analysis(analysis).summary
        names = list(dict.fromkeys(s.training["series"].astype(str)))
        _one_of(analysis, series, names, "a train series (a row of op train)", "train series")
        return figure(training_data(s.training, series))


def _named(series) -> None:
    """TypeError unless `series` is a series' name."""
    if not isinstance(series, str):
        raise TypeError(f"series must be a series' name (str), not {described(series)}")


def _one_of(
    analysis: Analysis, series, names: list[str], what: str, kind: str, one: str | None = None
) -> None:
    """TypeError unless `series` is a name; UnknownSeries unless it is one of `names`: another
    series of the analysis is not `what`; a name it does not have gets the nearest one. The
    message lists `names` as `kind` ("serve series: a, b"), or says there is no `one` (`kind`)."""
    _named(series)
    if series in names:
        return
    listed = f"{kind}: {', '.join(names)}" if names else f"there is no {one or kind}"
    summary = analysis.summary
    used = set(chart_frame(analysis)["series"].astype(str)) if summary.scenarios else set()
    if series in used:
        raise UnknownSeries(f"{quoted(series)} is not {what}; {listed}")
    hint = did_you_mean(series, sorted(used | set(names)))
    tail = f" (did you mean '{hint}'?)" if hint else ""
    raise UnknownSeries(f"no series {quoted(series)}{tail}; {listed}")


def chips(names, dtype: str = "bf16", hardware=None, *, lang: str | None = None) -> Figure:
    """Every chosen chip's HBM roofline at `dtype` on one pair of log-log axes, each ridge
    point marked with its FLOP/byte (the chart for a slide); chips without that dtype's peak
    are left out, and a note says so. `names` and `hardware` as for pipeline.chips()."""
    with use_lang(lang):
        family = peak_dtype(dtype)
        data = chips_data(chips_table(names, hardware), family)
        if not data.roofs:
            raise UnknownHardware(
                f"no {family} peak (peak_{family}) on {', '.join(data.left_out)}; give another "
                "dtype, or the peak in a --hardware file"
            )
        return chips_figure(data)


def planned(analysis: Analysis, *, every: bool = False, lang: str | None = None) -> list[Chart]:
    """The charts `pipeline run` draws for this analysis, in its order (before --max-charts);
    `every`: with the sweep charts of the series a fleet or model chart draws (on demand)."""
    with use_lang(lang):
        s = _analysis(analysis).summary
        frame = chart_frame(analysis)
        found = plan_charts(frame, list(analysis.hardware), s.per_hardware, s.overrides,
                            grids=s.grids, fleet=s.fleet, curves=s.fleet_curves,
                            steps=model_frame(analysis), every=every, roofs=s.roofs,
                            lines=sweep_lines(frame), serving=s.serving,
                            serving_curves=s.serving_curves, training=s.training)  # fmt: skip
        return [p.chart for p in found]


def _analysis(analysis: Analysis) -> Analysis:
    if not isinstance(analysis, Analysis):
        raise TypeError(
            f"expected an Analysis (from pipeline.analyze()), not {described(analysis)}"
        )
    return analysis


def _chip(analysis: Analysis, hardware: str):
    """(canonical name, its rows, its catalog record) for a chip name or alias."""
    _analysis(analysis)
    if not isinstance(hardware, str):
        raise TypeError(f"hardware must be a chip's name (str), not {described(hardware)}")
    if not analysis.summary.scenarios:
        n = analysis.summary.rejected_rows
        raise UnknownHardware(
            f"no scenario runs on {quoted(hardware)}: no scenario was computed "
            f"({fmt.plural(n, 'row')} rejected; see .problems)"
        )
    known = analysis.hardware
    spellings = alias_map([r["name"] for r in known], [r.get("aliases") for r in known])
    results = chart_frame(analysis)
    used = set(results["hardware"].astype(str))
    spellings.update({spelling(u): u for u in used})
    name = spellings.get(spelling(hardware))
    if name is None or name not in used:
        hint = did_you_mean(spelling(hardware), sorted(spellings))
        raise UnknownHardware(
            f"no scenario runs on {quoted(hardware)}"
            + (f" (did you mean '{hint}'?)" if hint else "")
            + f"; chips used: {', '.join(sorted(used))}"
        )
    rows = results[results["hardware"].astype(str) == name]
    records = {str(r["name"]): r for r in analysis.hardware}
    return name, rows, records.get(name, {"name": name})
