"""A/B of the whole run against earlier commits: the same scenario file, every output, run
by this checkout and by each REF in turn, start-up to exit.

    .venv/bin/python benchmarks/bench_ab.py [--rows 1000000] [--repeat 2] [REF ...]

Each REF (default b2290ee, the commit before the last seven issues, and HEAD's parent) is
checked out into a temporary git worktree and run with this environment's Python
(`python -m pipeline run FILE -o OUT -q` with the worktree as the working folder, so its
own `pipeline` package is the one imported); the checkout itself runs as `HEAD+work`.
The runs alternate (A B C A B C ...) so a busy machine slows them alike; the fastest of each
is reported in seconds, scenarios per second and as a ratio to this checkout's, with
the CPU seconds of the run's processes (steadier than wall time on a shared machine).

Each round also times the bare floors of the same work, in a process of their own: pandas
reading the file (pyarrow engine), pyarrow writing the results as CSV and as Parquet, and
rvgsrust-xlsxwriter dumping the workbook's Results rows (the first --workbook-rows, 100,000)
with no formats. Issue 40 asks a whole run for at most 1.6 x their sum.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.generate import write  # noqa: E402


def worktree(ref: str, where: Path) -> Path:
    """`ref` checked out at `where`; an old layout's top-level templates/ made importable."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(where),
                    ref], check=True)  # fmt: skip
    if (where / "templates").is_dir() and not (where / "pipeline" / "templates").exists():
        (where / "pipeline" / "templates").symlink_to(where / "templates")
    return where


def _children_cpu() -> float:
    """User + system CPU seconds of this process's finished children (and theirs)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_once(folder: Path, scenarios: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the run's processes, its output workers included) of one run."""
    shutil.rmtree(out, ignore_errors=True)
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "run", str(scenarios), "-o", str(out), "-q"],
        cwd=folder, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(folder)},
    )  # fmt: skip
    took = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(f"{folder}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return took


FLOORS = """
import sys, time
import pandas as pd, pyarrow as pa, pyarrow.csv as pcsv, pyarrow.parquet as pq
import rvgsrust_xlsxwriter as rx
scenarios, results, out = sys.argv[1:]
t = time.perf_counter(); pd.read_csv(scenarios, engine="pyarrow"); read = time.perf_counter() - t
table = pq.read_table(results)
t = time.perf_counter(); pcsv.write_csv(table, out + ".csv"); csv = time.perf_counter() - t
t = time.perf_counter(); pq.write_table(table, out + ".parquet"); parquet = time.perf_counter() - t
rows = table.slice(0, 100_000)
t = time.perf_counter()
book = rx.Workbook(out + ".xlsx")
book.add_worksheet("Results", constant_memory=True).write_dataframe(0, 0, rows)
book.close()
xlsx = time.perf_counter() - t
print(read, csv, parquet, xlsx)
"""


def floors(scenarios: Path, results: Path, out: Path) -> list[float]:
    """The bare floors (see the module), in seconds: read, CSV, Parquet, xlsx."""
    done = subprocess.run([sys.executable, "-c", FLOORS, str(scenarios), str(results), str(out)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return [float(x) for x in done.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("refs", nargs="*", default=["b2290ee", "HEAD~1"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        scenarios = write(args.rows, tmp / "nightly.csv")
        folders = {"HEAD+work": ROOT}
        try:
            for ref in args.refs:
                folders[ref] = worktree(ref, tmp / f"wt-{len(folders)}")
            times: dict[str, list[float]] = {name: [] for name in folders}
            cpus: dict[str, list[float]] = {name: [] for name in folders}
            bare: list[list[float]] = []
            for round_ in range(args.repeat):
                for name, folder in folders.items():
                    took, cpu = run_once(folder, scenarios, tmp / "out")
                    times[name].append(took)
                    cpus[name].append(cpu)
                    print(f"round {round_ + 1}: {name:>12} {took:6.2f} s (CPU {cpu:6.2f} s)",
                          flush=True)  # fmt: skip
                    if name == "HEAD+work":
                        results = tmp / "out" / "nightly" / "results.parquet"
                        shutil.copy(results, tmp / "results.parquet")
                bare.append(floors(scenarios, tmp / "results.parquet", tmp / "floor"))
                print(f"round {round_ + 1}: {'floors':>12} {sum(bare[-1]):6.2f} s", flush=True)
        finally:
            for folder in folders.values():
                if folder != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                    str(folder)], check=False)  # fmt: skip
        here, here_cpu = min(times["HEAD+work"]), min(cpus["HEAD+work"])
        print(f"\n{args.rows:,} scenarios, every output, fastest of {args.repeat}:")
        for name, got in times.items():
            best = min(got)
            cpu = min(cpus[name])
            print(f"  {name:>12}: {best:6.2f} s, {args.rows / best:10,.0f} scenarios/s, "
                  f"{best / here:4.2f} x this checkout; CPU {cpu:6.2f} s, "
                  f"{cpu / here_cpu:4.2f} x")  # fmt: skip
        parts = [min(b[k] for b in bare) for k in range(4)]
        named = ", ".join(f"{n} {v:.2f} s" for n, v in
                          zip(("read", "csv", "parquet", "xlsx"), parts, strict=True))  # fmt: skip
        print(
            f"  floors: {sum(parts):.2f} s ({named}); this checkout is "
            f"{here / sum(parts):.2f} x their sum (issue 40 asks at most 1.6 x)"
        )


if __name__ == "__main__":
    main()
