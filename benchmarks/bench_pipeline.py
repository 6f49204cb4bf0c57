"""Full-pipeline benchmark (issue 6): 1,000,000 scenarios, every output, default options.

    .venv/bin/python benchmarks/bench_pipeline.py [--rows 1000000] [--repeat 3]

Generates a scenario file (several ops, dtypes, sharded rows, a dozen chips), runs
`pipeline run FILE --verbose` in a child process (so its peak memory is its own), and prints
the per-stage seconds from its manifest, the end-to-end time and the peak RSS (of the largest
process, and of all the run's processes together, sampled every 0.5 s). Then, in this
process, the bare floors on the same data: pandas.read_csv of the input, pyarrow's CSV and
Parquet writers on the result frame, and a bare XlsxWriter constant-memory dump of the capped
Results sheet. The pipeline and the floors are run in turn `--repeat` times (the machine is
shared: one slow moment can move either by 20 %); the fastest of each is compared, and every
measurement is printed. Targets: end-to-end <= 1.5 x the largest single floor; results.csv +
results.parquet <= 2 x their two pyarrow floors.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import xlsxwriter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.generate import write  # noqa: E402
from pipeline.excel import DEFAULT_WORKBOOK_ROWS  # noqa: E402
from pipeline.hardware import load_catalog  # noqa: E402
from pipeline.roofline import compute_roofline  # noqa: E402
from pipeline.scenarios import load_scenarios  # noqa: E402


def timed(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def bare_xlsx(frame: pd.DataFrame, path: Path) -> None:
    """The floor: one sheet, constant memory, no formats."""
    book = xlsxwriter.Workbook(str(path), {"constant_memory": True, "nan_inf_to_errors": True})
    sheet = book.add_worksheet("Results")
    sheet.write_row(0, 0, [str(c) for c in frame.columns])
    columns = []
    for c in frame.columns:
        s = frame[c]
        if s.dtype.kind == "f":
            columns.append([None if v != v else v for v in s.to_numpy().tolist()])
        else:
            columns.append(s.astype(object).where(s.notna(), None).tolist())
    for r, row in enumerate(zip(*columns, strict=True), start=1):
        sheet.write_row(r, 0, row)
    book.close()


def tree_rss_mb(root: int) -> float:
    """RSS of a process and all its descendants, from Linux's /proc (0 elsewhere)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process has gone
            continue
        pid = int(stat.parent.name)
        parents[pid], rss[pid] = int(fields[1]), int(fields[21])
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, ppid in parents.items() if ppid in tree} - tree
        tree |= more
        grew = bool(more)
    return sum(rss.get(pid, 0) for pid in tree) * os.sysconf("SC_PAGE_SIZE") / 1e6


def run_pipeline(src: Path, out: Path) -> tuple[float, float, dict]:
    """`python -m pipeline run SRC --verbose`: seconds, peak MB of its process tree, manifest."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline", "run", str(src), "-o", str(out), "--verbose"],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=ROOT,
        )
        tree_mb = 0.0
        while proc.poll() is None:
            tree_mb = max(tree_mb, tree_rss_mb(proc.pid))
            time.sleep(0.5)  # reading /proc costs CPU on the machine being timed
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            stderr.seek(0)
            message = stderr.read().decode(errors="replace")[-3000:]
            sys.exit(f"pipeline failed ({proc.returncode}):\n{message}")
    return seconds, tree_mb, json.loads((out / src.stem / "manifest.json").read_text())


def measure_floors(src: Path, tmp: Path, results: pd.DataFrame) -> dict[str, float]:
    floors = {"pandas.read_csv (input)": timed(pd.read_csv, src)}
    table = pa.Table.from_pandas(results.astype({"bound": str, "collective": str}))
    floors["pyarrow CSV write (results)"] = timed(pacsv.write_csv, table, tmp / "f.csv")
    floors["pyarrow Parquet write (results)"] = timed(pq.write_table, table, tmp / "f.pq")
    capped = results.head(DEFAULT_WORKBOOK_ROWS)
    floors[f"XlsxWriter dump ({len(capped):,} rows)"] = timed(bare_xlsx, capped, tmp / "f.xlsx")
    return floors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of the pipeline and of the floors, taken in turn; the fastest of each counts",
    )
    args = parser.parse_args()
    runs: list[tuple[float, float, dict]] = []
    floor_runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
        tmp = Path(tmp)
        src = write(args.rows, tmp / "nightly.csv")
        results = compute_roofline(load_scenarios(src, load_catalog()).frame)
        for _ in range(args.repeat):  # in turn, so that both see the machine's slow moments
            runs.append(run_pipeline(src, tmp / "out"))
            floor_runs.append(measure_floors(src, tmp, results))
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    n = args.rows
    best = min(range(len(runs)), key=lambda i: runs[i][0])
    end_to_end, _, manifest = runs[best]
    stages = manifest["timings_seconds"]
    sizes = {f["path"]: f["bytes"] for f in manifest["files"]}
    print(f"{n:,} scenarios -> out/nightly: {len(sizes)} files; {args.repeat} run(s) of each")
    print("stage seconds of the fastest run (manifest; output stages overlap):")
    for stage, seconds in stages.items():
        print(f"  {stage:<10} {seconds:8.2f} s")
    each = ", ".join(f"{r[0]:.2f}" for r in runs)
    print(f"end to end (process)   {end_to_end:8.2f} s  {n / end_to_end:>12,.0f} rows/s  [{each}]")
    tree_mb = max(r[1] for r in runs)
    print(f"peak memory (RSS)      {peak_mb:8.0f} MB  largest process")
    print(f"                       {tree_mb:8.0f} MB  all its processes together (sampled)")
    print("floors, same data, this process (fastest, [each]):")
    floors = {k: min(f[k] for f in floor_runs) for k in floor_runs[0]}
    for label, seconds in floors.items():
        each = ", ".join(f"{f[label]:.2f}" for f in floor_runs)
        print(f"  {label:<36} {seconds:8.2f} s  [{each}]")
    largest = max(floors, key=floors.get)
    pairs = ", ".join(f"{r[0] / f[largest]:.2f}" for r, f in zip(runs, floor_runs, strict=True))
    print(
        f"end to end / largest floor: {end_to_end / floors[largest]:.2f} x, fastest of each"
        f" (each run with the floor after it: {pairs}) (target <= 1.5 x)"
    )
    table_floor = floors["pyarrow CSV write (results)"] + floors["pyarrow Parquet write (results)"]
    print(
        f"results.csv + results.parquet / pyarrow floors: {stages['results'] / table_floor:.2f} x"
        " (target <= 2 x)"
    )
    print(
        "output sizes: "
        + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items() if "/" not in k)
    )


if __name__ == "__main__":
    main()
