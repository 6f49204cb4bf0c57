"""`pipeline.calibrate(measured, out)`: fit a calibration to measured times (DESIGN.md §20,
docs/model.md#calibration) and write it with its report: the calibration file (TOML), a
predicted-vs-measured chart before and after (`<out>.png`) and a small page with both
(`<out>.html`), each written atomically. `measured` is a scenario file (CSV or .xlsx) or rows
with `measured_seconds`, or a run's output folder whose results carry them."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from pipeline.analysis import analyze
from pipeline.errors import InvalidResults, OutputError, printable
from pipeline.i18n import _
from pipeline.model.calibration import Calibration, estimate, op_kinds
from pipeline.model.calibration_file import write_calibration
from pipeline.model.groups import TOTAL_OPS
from pipeline.render.templates import environment
from pipeline.run.baseline import results_in
from pipeline.textfile import atomic_file, file_sha256

# what a fit reads of a run's results (a run of a calibrated run's too: its estimate unread)
COLUMNS = ("name", "op", "einsum", "hardware", "collective", "t_math", "t_hbm", "t_network",
           "t_lower", "count", "measured_seconds")  # fmt: skip


@dataclass(frozen=True)
class Calibrated:
    """What pipeline.calibrate made: the calibration, the rows it was fitted to (results
    with measured_seconds), and the files written (none without `out`)."""

    calibration: Calibration
    rows: pd.DataFrame
    files: tuple[Path, ...] = ()
    problems: tuple = ()  # the rows of `measured` refused (RowProblem), not fitted to

    def __repr__(self) -> str:
        return calibration_text(self.calibration)


def calibrate(
    measured, out=None, *, hardware=None, models=None, sheet=None, folds: int = 5
) -> Calibrated:
    """Fit the efficiencies and overhead per chip and op kind that bring the roofline to the
    `measured_seconds` of `measured` (a scenario file or rows, as pipeline.analyze takes
    them, or a run's output folder) and, given `out` (a .toml path), write the calibration
    there with `<out>.png` and `<out>.html` beside it. `hardware`, `models`, `sheet`: as for
    analyze. The rows of a transformer step's or a group's total are left out (their ops
    are fitted); a chip and kind with too few rows, or too little spread, is said, not
    guessed (docs/model.md#calibration)."""
    results, source, digest, problems = _measured_results(measured, hardware, models, sheet)
    total = results["op"].astype(str).isin(TOTAL_OPS).to_numpy(dtype=bool)
    rows = results[~total & results["measured_seconds"].notna().to_numpy()]
    rows = rows.reset_index(drop=True)
    if not len(rows):
        raise InvalidResults(
            f"{source}: no row has a measured_seconds: a calibration is fitted to measured "
            "times (give the rows a measured_seconds column, in seconds)"
        )
    from pipeline.model.calibration_fit import fit  # SciPy: imported when a fit is asked for

    calibration = fit(rows, source=source, source_sha256=digest, folds=folds)
    files: tuple[Path, ...] = ()
    if out is not None:
        files = write_report(calibration, rows, Path(out))
    return Calibrated(calibration, rows, files, problems)


def _measured_results(measured, hardware, models, sheet) -> tuple[pd.DataFrame, str, str, tuple]:
    """The results of `measured`, what it is called, its SHA-256 ('' for rows in memory) and
    the problems of its rows refused (a run's folder: none, its rows were checked then)."""
    if isinstance(measured, str | Path) and Path(measured).is_dir():
        folder = Path(measured)
        found = results_in(folder)
        if found is None:
            raise InvalidResults(
                f"{printable(folder)} has no results (results.parquet or results/part-*): "
                "give a run's output folder, or the scenario file with measured_seconds"
            )
        digest = file_sha256(found) if found.is_file() else ""
        return _read_results(found), str(folder), digest, ()
    if isinstance(measured, str | Path) and Path(measured).suffix == ".parquet":
        path = Path(measured)  # a run's results.parquet (or one Dask part), not its folder
        return _read_results(path), str(path), file_sha256(path), ()
    a = analyze(measured, hardware=hardware, models=models, sheet=sheet)
    problems = tuple(a.problem_list)
    if isinstance(measured, str | Path):
        return a.results, str(measured), a.source_sha256 or "", problems
    return a.results, "rows", "", problems


def _read_results(path: Path) -> pd.DataFrame:
    """A run's results, the columns a fit reads: results.parquet, results/part-*.parquet
    (a Dask run's), or results.csv."""
    if path.suffix == ".csv":
        frame = pd.read_csv(path)
        return frame[[c for c in COLUMNS if c in frame.columns]]
    files = sorted(path.glob("part-*.parquet")) if path.is_dir() else [path]
    tables = []
    for f in files:
        names = set(pq.read_schema(f).names)
        tables.append(pq.read_table(f, columns=[c for c in COLUMNS if c in names]).to_pandas())
    return pd.concat(tables, ignore_index=True)


def write_report(calibration: Calibration, rows: pd.DataFrame, out: Path) -> tuple[Path, ...]:
    """`out` (the calibration), `<out>.png` (the chart) and `<out>.html` (the chart and the
    groups' table), each atomically; their paths."""
    out = Path(out)
    try:  # as `run -o` makes its folder
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"{printable(out.parent)}: cannot make the folder for the calibration: "
            f"{exc.strerror or exc}"
        ) from None
    write_calibration(calibration, out)
    # matplotlib only when a chart is drawn (`import pipeline` never loads it)
    from pipeline.render.charts.calibration import calibration_chart_data, calibration_figure
    from pipeline.render.charts.style import png_bytes

    t, _unused = estimate(rows, calibration)
    title = _("Calibration {name}", name=out.name)
    data = calibration_chart_data(rows, t, op_kinds(rows), title=title)
    png = png_bytes(calibration_figure(data))
    chart = out.with_suffix(".png")
    with atomic_file(chart) as tmp:
        tmp.write_bytes(png)
    page = out.with_suffix(".html")
    html = (
        environment()
        .get_template("calibration.html.j2")
        .render(
            name=out.name,
            about=calibration_record(calibration),
            chart=base64.b64encode(png).decode("ascii"),
        )
    )
    with atomic_file(page) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return out, chart, page


def calibration_record(calibration: Calibration) -> dict:
    """The calibration as plain records for its page and the terminal: each group's values
    and errors (SI numbers), fitted or why not."""
    groups = []
    for g in calibration.groups.to_dict("records"):
        groups.append({**g, "fitted": bool(g["fitted"]), "rows": int(g["rows"])})
    return {
        "created": calibration.created,
        "source": calibration.source,
        "source_sha256": calibration.source_sha256,
        "error_before": calibration.error_before,
        "error_after": calibration.error_after,
        "heldout_error": calibration.heldout_error,
        "groups": groups,
    }


def calibration_text(calibration: Calibration) -> str:
    """The calibration as the terminal shows it, in the current language: one line per chip
    and kind, then the errors (a group's reason, the fit's, stays English)."""
    from pipeline.render import format as fmt

    pct = fmt.percent
    lines = []
    for g in calibration_record(calibration)["groups"]:
        where, rows = f"{g['hardware']} {g['kind']}", f"{g['rows']:,}"
        if not g["fitted"]:
            lines.append("  " + _("{where}: not fitted ({rows} rows): {reason}", where=where,
                                  rows=rows, reason=g["reason"]))  # fmt: skip
            continue
        effs = ", ".join(
            f"{label} {pct(g[c])}"
            for label, c in (
                (_("compute"), "compute_efficiency"),
                ("HBM", "hbm_efficiency"),
                (_("network"), "network_efficiency"),
            )  # fmt: skip
            if g[c] != 1.0
        )
        values = {"where": where, "effs": effs or _("efficiencies 100%"), "rows": rows,
                  "overhead": fmt.seconds(g["overhead_seconds"]), "before": pct(g["error_before"]),
                  "after": pct(g["error_after"]), "heldout": pct(g["heldout_error"])}  # fmt: skip
        if g["reason"]:
            line = _("{where}: {effs}, overhead {overhead}; {rows} rows, error {before} → {after} "
                     "(held out {heldout}); {reason}", reason=g["reason"], **values)  # fmt: skip
        else:
            line = _("{where}: {effs}, overhead {overhead}; {rows} rows, error {before} → {after} "
                     "(held out {heldout})", **values)  # fmt: skip
        lines.append("  " + line)
    overall = _("no group fitted")
    if np.isfinite(calibration.heldout_error):
        before, after = pct(calibration.error_before), pct(calibration.error_after)
        overall = _("error {before} → {after} (held out {heldout})", before=before, after=after,
                    heldout=pct(calibration.heldout_error))  # fmt: skip
    head = _("calibration of {source}: {overall}", source=calibration.source, overall=overall)
    return "\n".join([head, *lines])
