"""The workbook stage against a bare XlsxWriter constant-memory dump of the same results.

    .venv/bin/python benchmarks/bench_workbook.py [--rows 100000] [--repeat 3]

Generates `--rows` mixed scenarios (benchmarks/generate.py), analyzes them and draws the
run's charts once (not timed). Then, in this one process, in turn `--repeat` times:
- stage: pipeline.render.workbook.book.write_workbook, what `pipeline run` writes: the Results
  sheet (every row, number formats per column, conditional tints, quote prefix on text,
  freeze, filter, print setup), Hardware, Inputs (default cap, 10,000 rows), the Summary
  layout and the Charts sheet embedding the PNGs;
- bare XlsxWriter: the same results frame in one constant-memory sheet, no formats (columns
  to Python lists, NaN/NA to None, one write_row per row), the floor the issue names;
- bare rvgsrust-xlsxwriter: the same frame with the writer the stage uses, no formats, for
  reference (what the formatting and the other sheets add).
The fastest of each is compared. Target: stage <= 0.3 x the bare XlsxWriter dump.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import rvgsrust_xlsxwriter as rx
import xlsxwriter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402
from benchmarks.generate import write  # noqa: E402
from pipeline.render.charts import png  # noqa: E402
from pipeline.render.charts.data import chart_frame  # noqa: E402
from pipeline.render.charts.plan import plan_charts  # noqa: E402
from pipeline.render.workbook.book import write_workbook  # noqa: E402
from pipeline.run.tables import to_arrow  # noqa: E402


def timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def bare_xlsxwriter(frame: pd.DataFrame, path: Path) -> None:
    """The frame in one constant-memory sheet, no formats."""
    book = xlsxwriter.Workbook(str(path), {"constant_memory": True, "nan_inf_to_errors": True})
    sheet = book.add_worksheet("Results")
    sheet.write_row(0, 0, [str(c) for c in frame.columns])
    columns = []
    for name in frame.columns:
        series = frame[name]
        values = series.astype(object).to_numpy(copy=True)
        values[series.isna().to_numpy()] = None
        columns.append(values.tolist())
    for row, values in enumerate(zip(*columns, strict=True), start=1):
        sheet.write_row(row, 0, values)
    book.close()


def bare_rvgs(table: pa.Table, path: Path) -> None:
    book = rx.Workbook(str(path))
    book.add_worksheet("Results", constant_memory=True).write_dataframe(0, 0, table)
    book.close()


def plain_strings(table: pa.Table) -> pa.Table:
    """The writer takes plain strings, not dictionaries."""
    return pa.table(
        {name: pc.cast(col, pa.string()) if pa.types.is_dictionary(col.type) else col
         for name, col in zip(table.column_names, table.columns, strict=True)}
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, taken in turn")
    args = parser.parse_args()
    runs: dict[str, list[float]] = {"stage": [], "bare XlsxWriter": [], "bare rvgsrust": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        analysis = pipeline.analyze(write(args.rows, tmp / "bench.csv"))
        s = analysis.summary
        charts = []
        for planned in plan_charts(chart_frame(analysis), list(analysis.hardware), s.per_hardware,
                                   s.overrides):  # fmt: skip
            path = tmp / planned.chart.path
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(png(planned.build()))
            charts.append((planned.chart, path))
        results = analysis.results
        table = plain_strings(to_arrow(results))
        for _ in range(args.repeat):  # in turn, so that each sees the machine's slow moments
            runs["stage"].append(
                timed(write_workbook, analysis, tmp / "stage.xlsx", "bench", charts)
            )
            runs["bare XlsxWriter"].append(timed(bare_xlsxwriter, results, tmp / "bare.xlsx"))
            runs["bare rvgsrust"].append(timed(bare_rvgs, table, tmp / "rvgs.xlsx"))
        sizes = {k: (tmp / f).stat().st_size for k, f in
                 (("stage", "stage.xlsx"), ("bare XlsxWriter", "bare.xlsx"),
                  ("bare rvgsrust", "rvgs.xlsx"))}  # fmt: skip
    n, width = len(results), len(results.columns)
    print(f"{n:,} result rows x {width} columns, {len(charts)} charts; {args.repeat} run(s) "
          "of each, in turn (fastest, [each])")  # fmt: skip
    best = {k: min(v) for k, v in runs.items()}
    for k, v in runs.items():
        each = ", ".join(f"{x:.2f}" for x in v)
        print(f"  {k:<16} {best[k]:7.2f} s  {n / best[k]:>9,.0f} rows/s  "
              f"{sizes[k] / 1e6:5.1f} MB  [{each}]")  # fmt: skip
    ratio = best["stage"] / best["bare XlsxWriter"]
    pairs = ", ".join(
        f"{a / b:.2f}" for a, b in zip(runs["stage"], runs["bare XlsxWriter"], strict=True)
    )
    print(f"stage / bare XlsxWriter: {ratio:.2f} x (each run: {pairs}) (target <= 0.3 x)")
    print(f"stage / bare rvgsrust:   {best['stage'] / best['bare rvgsrust']:.2f} x "
          "(what formats, the other sheets and the charts add)")  # fmt: skip


if __name__ == "__main__":
    main()
