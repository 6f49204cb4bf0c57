"""The library's entry point: `analyze()` turns scenarios (a CSV file, a DataFrame or a list
of dicts) into an immutable `Analysis`: every scenario's roofline, every problem found, the
run's statistics, and `write()` for the outputs `pipeline run` writes (docs/api.md)."""

from __future__ import annotations

import codecs
import hashlib
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from numbers import Integral
from os import PathLike
from pathlib import Path

import pandas as pd

from pipeline.calibration.file import calibration_from
from pipeline.catalogs.chips import chips as chips_table
from pipeline.catalogs.hardware import Catalog, Hardware, catalog_frame, catalog_from
from pipeline.catalogs.llms import models_from
from pipeline.catalogs.prices import load_prices, price_files, price_warnings
from pipeline.errors import InvalidScenarios, OutputError, described, printable, quoted, text_list
from pipeline.i18n import _, use_lang
from pipeline.limits import (
    DEFAULT_MAX_CHARTS,
    DEFAULT_MAX_ROWS,
    DEFAULT_TABLE_ROWS,
    DEFAULT_WORKBOOK_INPUT_ROWS,
    DEFAULT_WORKBOOK_ROWS,
    MAX_ROWS_LIMIT,
)
from pipeline.model.overflow import refused_problems
from pipeline.model.step_totals import STEP_ROWS
from pipeline.names import FOLDER_BYTES, fit_bytes, folder_name
from pipeline.record import Record, record_of
from pipeline.render.format import count, counted, plural
from pipeline.render.report.notebook import render_analysis_html
from pipeline.render.text.catalog import chips_html, compare_lines
from pipeline.render.workbook.template import DEFAULT_PATH as DEFAULT_TEMPLATE
from pipeline.render.workbook.template import write_starter
from pipeline.render.workbook.xlsx_backend import panic_reason
from pipeline.run.baseline import compare_with
from pipeline.run.write import Options, Written, write_outputs
from pipeline.scenarios import load_records, load_scenarios
from pipeline.scenarios.refused import refuse_rows
from pipeline.scenarios.xlsx.package import RUN_WORKBOOK, recorded_run_name
from pipeline.summary.partial import chips_counted, computed, merge
from pipeline.textfile import atomic_file, check_file_place, refuse_existing

Source = str | Path | pd.DataFrame | Sequence[dict]


@dataclass(frozen=True, eq=False)
class Analysis(Record):
    """The result of `analyze()`: the record (pipeline.record.Record) and write()."""

    def __repr__(self) -> str:
        s = self.summary
        words = {"compute": _("compute"), "memory": _("memory"), "network": _("network")}
        bounds = ", ".join(f"{words[b]} {count(n)}" for b, n in s.bounds.items())
        chips = ", ".join(str(h["name"]) for h in self.hardware)
        rejected, warned = s.rejected_rows, len(self.warnings)
        return _(
            "<Analysis of {source}: {scenarios} ({bounds}) on {chips}; {rejected}, {warnings}>",
            source=self.source,
            scenarios=counted(s.scenarios, _("{n} scenario"), _("{n} scenarios")),
            bounds=bounds,
            chips=chips or "-",
            rejected=counted(rejected, _("{n} rejected row"), _("{n} rejected rows")),
            warnings=counted(warned, _("{n} warning"), _("{n} warnings")),
        )

    def _repr_html_(self) -> str:
        """What Jupyter shows for an Analysis (pipeline.render.report.notebook)."""
        return render_analysis_html(self)

    @property
    def name(self) -> str:
        """The default output folder name: the file's stem, sanitized (output_name)."""
        if self.source_sha256 and self._read:  # the file read: a workbook's source names its sheet
            return output_name(self._read[0])
        return folder_name(Path(self.source).stem if self.source_sha256 else self.source)

    def write(
        self,
        out_dir: str | Path,
        *,
        plots: bool = True,
        workbook: bool = True,
        report: bool = True,
        max_charts: int = DEFAULT_MAX_CHARTS,
        workbook_rows: int = DEFAULT_WORKBOOK_ROWS,
        workbook_input_rows: int = DEFAULT_WORKBOOK_INPUT_ROWS,
        report_rows: int = DEFAULT_TABLE_ROWS,
        force: bool = False,
        protect: Sequence[str | Path] = (),
        workers: int | None = None,
        progress=None,
        baseline: str | Path | None = None,
        lang: str | None = None,
    ) -> Written:
        """Write exactly what `pipeline run` writes into `out_dir` (replaced as a whole, only
        if it is missing, empty or an output folder of an earlier run; `force` also replaces
        one to which files were added). `protect`: files an output folder must not hold (the
        inputs). `workers`: processes drawing the outputs (None: every core when it pays).
        `baseline`: an earlier run's output folder to compare with (changes.csv, the report's
        "Since the baseline", the workbook's Changes sheet, the manifest's "changes"); a
        folder that is missing or holds no readable results raises BaselineError first.
        `lang`: the language of the report, the workbook's words and the charts (en, ko;
        None: PIPELINE_LANG's, else en); results.csv and column names stay English."""
        options = Options(
            plots=plots,
            workbook=workbook,
            report=report,
            max_charts=max_charts,
            workbook_rows=workbook_rows,
            workbook_input_rows=workbook_input_rows,
            report_rows=report_rows,
            force=force,
            workers=workers,
        )
        compared = compare_with(baseline, self.results) if baseline is not None else None
        with use_lang(lang):
            return write_outputs(self, out_dir, options, protect, progress, self._read, compared)


def output_name(path: Path) -> str:
    """The output folder name of scenario file `path`: its stem, sanitized; for a run's own
    workbook (workbook.xlsx, titled by the run that wrote it) the run's name and `-rerun`
    (output/q1-q5/workbook.xlsx -> q1-q5-rerun), so the re-runs of two runs' workbooks
    never share a folder, and a re-run never lands in the folder it reads from."""
    path = Path(path)
    if path.stem.lower() == RUN_WORKBOOK and path.suffix.lower() in (".xlsx", ".xlsm"):
        run = recorded_run_name(path)
        if run is not None:
            return f"{folder_name(run)}-rerun"
    return folder_name(path.stem)


def analyze(
    source: Source,
    *,
    hardware: Hardware = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    strict: bool = False,
    name: str | None = None,
    sheet: str | None = None,
    encoding: str | None = None,
    keep_columns: str | Sequence[str] = (),
    models=None,
    calibration=None,
    prices=None,
    models_rows: int = STEP_ROWS,
) -> Analysis:
    """Check and compute every scenario of `source`: a path to a scenario CSV or .xlsx
    workbook, a pandas DataFrame or a list of dicts with the same columns (docs/input.md).
    `sheet`: a workbook's sheet (default Scenarios, else Inputs, else the first). `encoding`:
    a CSV's, when not UTF-8 (`cp1252`). `hardware`: extra or
    overriding chips (a CSV or TOML path, a DataFrame, a list of them, or a Catalog).
    `strict`: any rejected row raises InvalidScenarios carrying every problem; otherwise the
    valid rows are computed and the problems listed in `.problems`. `name` labels rows given
    in memory in messages (default "rows"). `keep_columns`: columns of your own whose names
    are close to a known column's (`dtpye`), carried through instead of refusing the file
    (a `user_` prefix does the same). `models`: extra or overriding models for `transformer`
    rows (a CSV or TOML path, a DataFrame, a list of them, or a ModelCatalog: as
    pipeline.models() takes them). `calibration`: a calibration file (pipeline.calibrate
    writes one), "published" (the one that ships), a Calibration, or a list of these whose
    groups differ (merged): the results gain t_estimate, estimate_bound and
    calibration (docs/model.md#calibration). `prices`: a price file (CSV or Parquet: hardware,
    usd_per_chip_hour, source, date) or a DataFrame of those columns: the results gain
    usd_per_chip_hour and cost (docs/input.md#prices). `models_rows`: the most steps the Models
    table lists (the slowest, every fleet point's best among them; docs/outputs.md)."""
    if isinstance(max_rows, bool) or not isinstance(max_rows, Integral):
        raise TypeError(
            f"max_rows must be a whole number (int) from 1 to {MAX_ROWS_LIMIT:,}, "
            f"not {described(max_rows)}"
        )
    if not 1 <= max_rows <= MAX_ROWS_LIMIT:
        raise ValueError(f"max_rows must be 1 to {MAX_ROWS_LIMIT:,}, not {max_rows:,}")
    check_arguments(dict(strict=strict), dict(name=name, sheet=sheet, encoding=encoding))
    check_models_rows(models_rows)
    keep = kept_columns(keep_columns)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    catalog = catalog_from(hardware)
    models = None if models is None else models_from(models, strict=True)  # user models added
    cal, cal_files = (None, ()) if calibration is None else calibration_from(calibration)
    priced = None if prices is None else load_prices(prices, catalog)
    read: tuple[Path, ...] = ()
    if isinstance(source, str | Path):
        read = (Path(os.path.abspath(source)),)
        loaded = load_scenarios(
            Path(source), catalog, max_rows=max_rows, sheet=sheet, encoding=encoding,
            keep_columns=keep, models=models,
        )  # fmt: skip
    else:
        loaded = load_records(
            source, catalog, max_rows=max_rows, source=name or "rows", keep_columns=keep,
            models=models,
        )  # fmt: skip
    t1 = time.perf_counter()
    results, facts, part, keep = computed(
        loaded.frame, grids=True, calibration=cal, models_rows=models_rows,
        prices=None if priced is None else priced.usd_per_chip_hour,
    )  # fmt: skip
    loaded = refuse_rows(loaded, keep, refused_problems(loaded.source, part.refused))
    if strict and loaded.problems:
        raise strict_refusal(loaded, catalog)
    return record_of(
        Analysis, merge([part]), loaded, catalog, cal,
        (*catalog.warnings, *loaded.warnings, *price_warnings(priced, chips_counted(part))),
        started=started, timings={"load": t1 - t0, "compute": time.perf_counter() - t1},
        _read=(*read, *catalog.files, *cal_files, *price_files(priced)), _results=results,
        prices=None if priced is None else (str(priced.path or priced.label), priced.sha256),
        _facts=facts,
    )  # fmt: skip


def check_arguments(flags: dict, texts: dict) -> None:
    """The arguments analyze() and run_dask() share, checked alike: `flags` True or False,
    `texts` a str or None (an `encoding` one Python knows); TypeError or ValueError."""
    for label, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{label} must be True or False, not {described(value)}")
    for label, value in texts.items():
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{label} must be a str or None, not {described(value)}")
    if (encoding := texts.get("encoding")) is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise ValueError(f"unknown encoding {quoted(encoding)} (e.g. cp1252, utf-16)") from None


def check_models_rows(models_rows) -> None:
    """analyze()'s and run_dask()'s `models_rows` checked: a whole number, 1 or more."""
    if isinstance(models_rows, bool) or not isinstance(models_rows, Integral):
        raise TypeError(f"models_rows must be a whole number (int) of 1 or more, not "
                        f"{described(models_rows)}")  # fmt: skip
    if models_rows < 1:
        raise ValueError(f"models_rows must be 1 or more, not {models_rows:,}")


def kept_columns(keep_columns) -> tuple[str, ...]:
    """analyze()'s `keep_columns` checked: a column name, or a list of them."""
    return tuple(
        text_list(keep_columns, "keep_columns must be column names", "a keep_columns name")
    )


def strict_refusal(loaded, catalog: Catalog) -> InvalidScenarios:
    """The error of a strict run (--strict) whose file has rejected rows: every problem."""
    return InvalidScenarios(
        f"{printable(loaded.source)}: {plural(loaded.rejected_lines, 'row')} rejected and "
        "strict mode (--strict) is on; nothing written",
        loaded.problems,
        (*catalog.warnings, *loaded.warnings),
    )


def catalog(hardware: Hardware = None) -> pd.DataFrame:
    """The hardware catalog as a DataFrame (one row per chip, every number with its source
    and date), with `hardware` (as for analyze) added or overriding. It can be given back as
    `hardware=`, with values changed (rows left out are not removed: it overrides and adds)."""
    chips = catalog_from(hardware)
    return catalog_frame(chips)


class ChipTable(pd.DataFrame):
    """pipeline.chips()'s table: a DataFrame of SI values (fields as rows, a chip a column),
    shown with units (GB/s, TFLOP/s, FLOP/byte) as `pipeline hardware --compare` prints it.
    Only the display differs: every value, `.to_numpy()` and every method are the
    DataFrame's, and what they derive is a plain DataFrame."""

    @property
    def _constructor(self):
        return pd.DataFrame  # a slice or a sum is numbers, no longer this table's rows

    def __repr__(self) -> str:
        return "\n".join(compare_lines(pd.DataFrame(self)))

    def _repr_html_(self) -> str:
        """What Jupyter shows: the same table as HTML."""
        return chips_html(pd.DataFrame(self))


def chips(names: str | Sequence[str], hardware: Hardware = None) -> ChipTable:
    """The chosen chips side by side (pipeline.catalogs.chips.chips: fields as rows, a column
    per chip, SI units, NaN where a chip has no value), shown with units in a notebook."""
    return ChipTable(chips_table(names, hardware))


def load_hardware(hardware: Hardware = None) -> Catalog:
    """The catalog with `hardware` added, to share between several analyze() calls."""
    return catalog_from(hardware)


def write_template(
    path: str | Path = DEFAULT_TEMPLATE, *, force: bool = False, hardware: Hardware = None
) -> Path:
    """Write the starter workbook (docs/input.md#starting-from-a-spreadsheet) at `path`, the
    catalog with `hardware` added on its Hardware sheet; refused when `path` exists, unless
    `force`. Written to a temporary file beside it, then renamed over it, so `path` is never
    half written. Returns the path."""
    catalog = load_hardware(hardware)
    if not isinstance(force, bool):
        raise TypeError(f"force must be True or False, not {described(force)}")
    if not isinstance(path, str | PathLike) or isinstance(path, bytes):
        raise TypeError(f"path must be a str or a pathlib.Path, not {described(path)}")
    if str(path) == "":  # Path("") is '.', a name nobody gave
        raise OutputError("'' is an empty path; name the workbook, e.g. scenarios.xlsx")
    path = Path(path)
    if path.suffix.lower() != ".xlsx":
        raise OutputError(f"{printable(path)}: a template is an Excel workbook; name it *.xlsx")
    check_file_place(path, "scenarios.xlsx")
    refuse_existing(path, force)
    try:
        with atomic_file(path) as temp:
            write_starter(temp, catalog)
    except OSError as exc:
        raise OutputError(f"writing {printable(path)} failed: {exc.strerror or exc}") from exc
    except (ValueError, RuntimeError) as exc:
        raise OutputError(f"writing {printable(path)} failed: {exc}") from exc
    except BaseException as exc:  # a Rust panic (a full disk) arrives as a BaseException
        if type(exc).__name__ != "PanicException":
            raise
        raise OutputError(f"writing {printable(path)} failed: {panic_reason(exc)}") from None
    return path


def output_names(paths: list[Path]) -> list[str]:
    """One output folder name per input: its stem in any script, made safe (a run's own
    workbook.xlsx: its run's name and -rerun; pipeline.api.analyze.output_name). Inputs whose
    names meet (Plan.csv, plan.csv; a/plan.csv, b/plan.csv) each get their own folder, the
    same whatever the order: the one whose stem is already the folder name keeps it, each
    other one gets `-` and 6 hex digits of its path's SHA-256 (plan-3f9a1c); distinct in
    lower case too, for a case-insensitive file system."""
    bases = [output_name(path) for path in paths]
    inputs = dict(zip(paths, bases, strict=True))  # a path given twice is one input
    met = Counter(inputs.values())
    own = Counter(b for path, b in inputs.items() if path.stem == b)
    names: list[str] = []
    for path, base in zip(paths, bases, strict=True):
        name = base
        if met[base] > 1 and not (path.stem == base and own[base] == 1):
            tag = f"-{hashlib.sha256(path.as_posix().encode()).hexdigest()[:6]}"
            name = fit_bytes(base, FOLDER_BYTES - len(tag)).rstrip("-.") + tag
        first, k = name, 2
        while name.casefold() in {n.casefold() for n in names}:  # the same path twice
            name, k = f"{first}-{k}", k + 1
        names.append(name)
    return names
