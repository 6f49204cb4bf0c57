"""`pipeline.calibrate(measured, out)`: fit a calibration to measured times (DESIGN.md §20,
docs/model.md#calibration) and write it with its report: the calibration file (TOML), a
predicted-vs-measured chart before and after (`<out>.png`) and a small page with both
(`<out>.html`), each written atomically, never over a file there unless `force`, never over
an input or into a folder this tool wrote (check_targets). `measured` is a scenario file (CSV
or .xlsx) or rows with `measured_seconds`, or a run's output folder whose results carry them."""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from pipeline.api.analyze import analyze
from pipeline.calibration.estimate import ERRORS, Calibration, estimate
from pipeline.calibration.file import write_calibration
from pipeline.calibration.groups import KEYS, group_name, op_kinds
from pipeline.errors import (
    InvalidResults,
    InvalidScenarios,
    OutputError,
    described,
    printable,
    quoted,
)
from pipeline.i18n import _
from pipeline.model.groups import TOTAL_OPS
from pipeline.model.ops import is_dim
from pipeline.render import format as fmt
from pipeline.render.templates import environment
from pipeline.run.baseline import results_in
from pipeline.run.manifest import read_manifest
from pipeline.textfile import atomic_file, check_file_place, file_sha256, refuse_existing

# what a fit reads of a run's results (a run of a calibrated run's too: its estimate unread)
COLUMNS = ("name", "op", "einsum", "hardware", "collective", "t_math", "t_hbm", "t_network",
           "t_lower", "count", "measured_seconds", "compute_dtype", "chips", "link",
           "network_bytes", "flops", "bytes_read")  # fmt: skip
# and the dims (a row's shape: its fold, its matmul's m, n, k)


@dataclass(frozen=True)
class Calibrated:
    """What pipeline.calibrate made: the calibration, the rows it was fitted to (results
    with measured_seconds), and the files written (none without `out`)."""

    calibration: Calibration
    rows: pd.DataFrame
    files: tuple[Path, ...] = ()
    problems: tuple = ()  # the rows of `measured` refused (RowProblem), not fitted to
    warnings: tuple[str, ...] = ()  # doubts about the measurements and groups: fit_warnings

    def __repr__(self) -> str:
        return calibration_text(self.calibration)


def calibrate(
    measured,
    out=None,
    *,
    force: bool = False,
    hardware=None,
    models=None,
    sheet=None,
    folds: int = 5,
) -> Calibrated:
    """Fit the efficiencies and overhead per chip and op kind that bring the roofline to the
    `measured_seconds` of `measured` (a scenario file or rows, as pipeline.analyze takes
    them, or a run's output folder) and, given `out` (a .toml path in a folder that exists),
    write the calibration there with `<out>.png` and `<out>.html` beside it: a file there is
    replaced only with `force`, an input or a run's folder never (OutputError before any
    fit). `hardware`, `models`, `sheet`: as for analyze. The rows of a transformer step's or
    a group's total are left out (their ops are fitted); a chip and kind with too few rows,
    or too little spread, is said, not guessed (docs/model.md#calibration)."""
    if not isinstance(force, bool):
        raise TypeError(f"force must be True or False, not {described(force)}")
    if out is not None:
        check_targets(Path(out), _input_paths(measured, hardware, models), force)
    results, source, digest, problems = _measured_results(measured, hardware, models, sheet)
    total = results["op"].astype(str).isin(TOTAL_OPS).to_numpy(dtype=bool)
    rows = results[~total & results["measured_seconds"].notna().to_numpy()]
    rows = rows.reset_index(drop=True)
    steps = _measured_steps(results, total)
    if not len(rows) and steps:
        raise InvalidResults(f"{source}: no row to fit: {steps}")
    if not len(rows):
        _nothing_to_fit(source, problems, int((~total).sum()))
    # SciPy: imported when a fit is asked for
    from pipeline.calibration.doubts import fit_warnings
    from pipeline.calibration.fit import fit

    calibration = fit(rows, source=source, source_sha256=digest, folds=folds)
    files: tuple[Path, ...] = ()
    if out is not None:
        files = write_report(calibration, rows, Path(out))
    said = (*([steps] if steps else []), *fit_warnings(rows, calibration))
    return Calibrated(calibration, rows, files, problems, said)


def _measured_steps(results: pd.DataFrame, total: np.ndarray) -> str:
    """What is said of the transformer steps given a measured_seconds ('' for none): left
    out, as a step's time is its ops' together and a fit is per op kind (their op rows
    carry no measured time: model.transformer)."""
    measured = total & results["measured_seconds"].notna().to_numpy()
    if not measured.any():
        return ""
    names = results["name"].astype(str).to_numpy(dtype=object)[measured]
    shown = ", ".join(quoted(n) for n in names[:3])
    more = f" and {len(names) - 3:,} more" if len(names) > 3 else ""
    return (
        f"{fmt.plural(len(names), 'transformer step')} with a "
        f"measured_seconds left out ({shown}{more}): a calibration is fitted per chip and op "
        "kind to ops' times, and a step's time is its ops' together; give the ops' measured "
        "times as rows of their own"
    )


def _nothing_to_fit(source: str, problems: tuple, computed: int) -> None:
    """Raise the error of a fit with no row: the rows refused and why (the first; every one
    in the error's `problems`), else what a calibration needs."""
    if not problems:
        raise InvalidResults(
            f"{source}: no row has a measured_seconds: a calibration is fitted to measured "
            "times (give the rows a measured_seconds column, in seconds)"
        )
    lines = len({p.line for p in problems})
    rows = fmt.plural(lines, "row")
    if computed:
        said = (
            f"the {computed:,} rows computed have no measured_seconds, and {rows} "
            f"{'was' if lines == 1 else 'were'} refused (the first: {problems[0]})"
        )
    else:
        said = f"every row was refused ({rows}; the first: {problems[0]})"
    raise InvalidScenarios(f"{source}: no row to fit: {said}", problems)


def check_targets(out: Path, inputs: list[Path], force: bool) -> tuple[Path, Path, Path]:
    """The files a calibration at `out` writes (`out`, `<out>.png`, `<out>.html`); OutputError
    unless `out` ends in .toml and is not inside a folder this tool wrote (a run's, a
    comparison's: replaced whole by the next), none is an input (or inside a folder given as
    one), its folder exists and, unless `force`, none is there yet."""
    name = printable(out)
    if out.suffix.lower() != ".toml":
        raise OutputError(
            f"{name}: a calibration is a TOML file; name it *.toml (its chart .png and page "
            ".html are written beside it)"
        )
    targets = (out, out.with_suffix(".png"), out.with_suffix(".html"))
    for folder in _folders_of(out):
        if read_manifest(folder) is not None:
            raise OutputError(
                f"{name} is inside {printable(folder)}, a folder this tool wrote and replaces "
                "whole; write the calibration elsewhere (e.g. -o calibration.toml)"
            )
    for target in targets:
        held = _held(target, inputs)
        if held is not None:
            raise OutputError(
                f"{printable(target)} is an input of this calibration"
                + ("" if held == target else f" (inside {printable(held)})")
                + "; it is never written over: give another -o"
            )
    check_file_place(out, "calibration.toml")
    for target in targets:
        refuse_existing(target, force)
    return targets


def _input_paths(measured, hardware, models) -> list[Path]:
    """The files (and folders) a calibration reads: never among those it writes."""
    given = [measured]
    for more in (hardware, models):
        given.extend(more if isinstance(more, list | tuple) else [more])
    return [Path(g) for g in given if isinstance(g, str | os.PathLike)]


def _held(target: Path, inputs: list[Path]) -> Path | None:
    """The input `target` is (by its resolved path or as given), or a folder input holding it."""
    places = {target.resolve(), Path(os.path.abspath(target))}
    for path in inputs:
        for where in {path.resolve(), Path(os.path.abspath(path))}:
            if where in places:
                return target
            if path.is_dir() and any(where in p.parents for p in places):
                return path
    return None


def _folders_of(out: Path) -> list[Path]:
    """Every folder `out` is inside, as given and resolved (a link to a run's folder too)."""
    folders = dict.fromkeys([*Path(os.path.abspath(out)).parents, *out.resolve().parents])
    return list(folders)


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
    if isinstance(measured, str | Path) and _is_results(Path(measured)):
        path = Path(measured)  # a run's results.parquet (or one Dask part), not its folder
        return _read_results(path), str(path), file_sha256(path), ()
    a = analyze(measured, hardware=hardware, models=models, sheet=sheet)
    problems = tuple(a.problem_list)
    results = a.results.assign(latency_knee=a.facts["latency_knee"].to_numpy())  # fit: t_bw
    if isinstance(measured, str | Path):
        return results, str(measured), a.source_sha256 or "", problems
    return results, "rows", "", problems


def _is_results(path: Path) -> bool:
    """A run's results.parquet (its t_lower column), not a Parquet file of scenario rows."""
    return path.suffix == ".parquet" and path.is_file() and "t_lower" in pq.read_schema(path).names


def _read_results(path: Path) -> pd.DataFrame:
    """A run's results, the columns a fit reads: results.parquet, results/part-*.parquet
    (a Dask run's), or results.csv."""
    if path.suffix == ".csv":
        frame = pd.read_csv(path)
        return frame[_read(frame.columns)]
    files = sorted(path.glob("part-*.parquet")) if path.is_dir() else [path]
    tables = []
    for f in files:
        tables.append(pq.read_table(f, columns=_read(pq.read_schema(f).names)).to_pandas())
    return pd.concat(tables, ignore_index=True)


def _read(names) -> list[str]:
    """The columns of a run's results a fit reads: COLUMNS and the dims."""
    return [c for c in names if c in COLUMNS or is_dim(c)]


def write_report(calibration: Calibration, rows: pd.DataFrame, out: Path) -> tuple[Path, ...]:
    """`out` (the calibration), `<out>.png` (the chart) and `<out>.html` (the chart and the
    groups' table), each atomically; their paths."""
    out = Path(out)
    write_calibration(calibration, out)
    # matplotlib only when a chart is drawn (`import pipeline` never loads it)
    from pipeline.render.charts.calibration import (
        calibration_chart_data,
        calibration_figure,
        chart_labels,
    )
    from pipeline.render.charts.style import png_bytes

    t, _unused = estimate(rows, calibration)
    title = _("Calibration {name}", name=out.name)
    errors = {k: getattr(calibration, k) for k in ERRORS}  # the fit's
    data = calibration_chart_data(rows, t, chart_labels(rows, op_kinds(rows)), errors, title=title)
    png = png_bytes(calibration_figure(data))
    chart, page = out.with_suffix(".png"), out.with_suffix(".html")
    _write(chart, png)
    html = (
        environment()
        .get_template("calibration.html.j2")
        .render(
            name=out.name,
            about=calibration_record(calibration),
            chart=base64.b64encode(png).decode("ascii"),
        )
    )
    _write(page, html.encode("utf-8"))
    return out, chart, page


def _write(path: Path, data: bytes) -> None:
    try:
        with atomic_file(path) as tmp:
            tmp.write_bytes(data)
    except OSError as exc:
        raise OutputError(f"{printable(path)}: cannot write: {exc.strerror or exc}") from exc


def calibration_record(calibration: Calibration) -> dict:
    """The calibration as plain records for its page and the terminal: each group's name,
    values and errors (SI numbers, fractions), fitted and used or why not."""
    groups = []
    for g in calibration.groups.to_dict("records"):
        name = group_name(tuple(g[k] for k in KEYS))
        groups.append({**g, "name": name, "fitted": bool(g["fitted"]), "used": bool(g["used"]),
                       "rows": int(g["rows"])})  # fmt: skip
    return {
        "created": calibration.created,
        "source": calibration.source,
        "source_sha256": calibration.source_sha256,
        **{k: getattr(calibration, k) for k in ERRORS},
        "groups": groups,
    }


def errors_text(said: dict, which: str = "heldout_") -> str:
    """An error's median and p90 as lines say them: '2.1% / 13%' (`which`: 'floor_', '',
    'heldout_')."""
    return f"{fmt.percent(said[which + 'median'])} / {fmt.percent(said[which + 'p90'])}"


TOO_FEW = re.compile(r"^[\d,]+ rows?, \d+ needed$")  # fit.py's reason for a group too small


def calibration_text(calibration: Calibration) -> str:
    """The calibration as the terminal shows it, in the current language: one line per group
    (its form, values, rows and errors: the floor's → held out, median / p90), the groups
    not fitted or not used and why, then the whole's errors (a group's reason, the fit's,
    stays English)."""
    lines, few = [], []
    for g in calibration_record(calibration)["groups"]:
        said = dict(where=g["name"], rows=f"{g['rows']:,}", reason=g["reason"])
        if not g["fitted"] and TOO_FEW.match(g["reason"]):  # said together, below
            few.append(f"{g['name']} ({g['reason']})")
            continue
        if not g["fitted"] and g["reason"].startswith(f"{g['rows']:,} row"):  # said there
            lines.append("  " + _("{where}: not fitted: {reason}", **said))
            continue
        if not g["fitted"]:
            if g["rows"] == 1:
                text = _("{where}: not fitted ({rows} row): {reason}", **said)
            else:
                text = _("{where}: not fitted ({rows} rows): {reason}", **said)
            lines.append("  " + text)
            continue
        said.update(floor=errors_text(g, "floor_"), heldout=errors_text(g), fit=errors_text(g, ""))
        if not g["used"]:
            text = _("{where}: not used ({rows} rows): error {floor} → {heldout} held out, no "
                     "better than the floor (median / p90)", **said)  # fmt: skip
            lines.append("  " + text + (f"; {g['reason']}" if g["reason"] else ""))
            continue
        effs = ", ".join(
            f"{label} {fmt.percent(g[c])}"
            for label, c in (
                (_("compute"), "compute_efficiency"),
                ("HBM", "hbm_efficiency"),
                (_("network"), "network_efficiency"),
            )  # fmt: skip
            if g[c] != 1.0
        )
        line = _("{where}: {form}, {effs}, overhead {overhead}; {rows} rows, error {floor} → "
                 "{heldout} held out ({fit} fitted)", form=g["form"],
                 effs=effs or _("efficiencies 100%"), overhead=fmt.seconds(g["overhead_seconds"]),
                 **said)  # fmt: skip
        lines.append("  " + line + (f"; {g['reason']}" if g["reason"] else ""))
    overall = _("no group used")
    if np.isfinite(calibration.heldout_median):
        about = {k: getattr(calibration, k) for k in ERRORS}
        overall = _("error {floor} → {heldout} held out ({fit} fitted), median / p90",
                    floor=errors_text(about, "floor_"), heldout=errors_text(about),
                    fit=errors_text(about, ""))  # fmt: skip
    head = _("calibration of {source}: {overall}", source=calibration.source, overall=overall)
    if few:  # groups of a handful of rows (a book's examples beside a profile): no failure
        lines.append("  " + _("too few rows to fit, their rows keep the floor: {groups}",
                              groups=", ".join(few)))  # fmt: skip
    return "\n".join([head, *lines])
