"""Reading scenarios from a workbook against reading the same rows as CSV, and against the
bare reads of the sheet by openpyxl (read-only) and python-calamine.

    .venv/bin/python benchmarks/bench_xlsx_input.py [--rows 100000] [--repeat 3]

Generates `--rows` mixed scenarios (benchmarks/generate.py) and writes them, not timed, as a
CSV and as an .xlsx sheet (numbers as numbers, text as text, as Excel saves them). Then, in
this one process, in turn `--repeat` times:
- `pipeline validate` of the sheet and of the CSV (`validate` in-process: analyze() then the
  summary line, as the command does);
- bare openpyxl: load_workbook(read_only=True, data_only=True), every row's values;
- bare python-calamine: the sheet's rows as Python values (what pipeline.scenarios.xlsx.sheet uses).
The fastest of each is compared. Target: sheet <= 1.5 x the fastest bare read + the CSV.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import openpyxl
import python_calamine
import xlsxwriter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.generate import generate  # noqa: E402
from pipeline.cli import cli  # noqa: E402


def write_sheet(frame, path: Path) -> None:
    """The frame on a Scenarios sheet: numbers as numbers, blanks as empty cells."""
    book = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    sheet = book.add_worksheet("Scenarios")
    sheet.write_row(0, 0, [str(c) for c in frame.columns])
    columns = []
    for name in frame.columns:
        values = frame[name].astype(object).to_numpy(copy=True)
        values[frame[name].isna().to_numpy()] = None
        columns.append(values.tolist())
    for i, row in enumerate(zip(*columns, strict=True)):
        sheet.write_row(i + 1, 0, [None if v == "" else v for v in row])
    book.close()


def validate(path: Path) -> None:
    try:
        cli.main(["validate", str(path)], standalone_mode=False)
    except SystemExit:
        pass


def bare_openpyxl(path: Path) -> None:
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    for _ in book["Scenarios"].iter_rows(values_only=True):
        pass
    book.close()


def bare_calamine(path: Path) -> None:
    book = python_calamine.CalamineWorkbook.from_path(str(path))
    book.get_sheet_by_name("Scenarios").to_python(skip_empty_area=False)


def fastest(fn, path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(path)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        frame = generate(args.rows)
        csv, xlsx = Path(tmp) / "s.csv", Path(tmp) / "s.xlsx"
        frame.to_csv(csv, index=False)
        write_sheet(frame, xlsx)
        print(
            f"{args.rows:,} rows: {csv.stat().st_size:,} bytes of CSV, "
            f"{xlsx.stat().st_size:,} of xlsx"
        )
        sheet = fastest(validate, xlsx, args.repeat)
        text = fastest(validate, csv, args.repeat)
        opx = fastest(bare_openpyxl, xlsx, args.repeat)
        cal = fastest(bare_calamine, xlsx, args.repeat)
    target = 1.5 * min(opx, cal) + text
    print(f"pipeline validate, sheet:      {sheet:7.2f} s")
    print(f"pipeline validate, CSV:        {text:7.2f} s")
    print(f"bare read, openpyxl read-only: {opx:7.2f} s")
    print(f"bare read, python-calamine:    {cal:7.2f} s")
    verdict = "met" if sheet <= target else "MISSED"
    print(f"target: sheet <= 1.5 x {min(opx, cal):.2f} + {text:.2f} = {target:.2f} s: {verdict}")


if __name__ == "__main__":
    main()
