"""Dask engine benchmark: pipeline.run_dask (`pipeline run FILE --engine dask`) on a
2-row sweep file sized to N scenarios (row a: matmul, B=1..k, D=256..65536*2, F=4096 on
h100|b200; row b: batched_matmul, B=1..rest, D=F=1024 on mi300x), each run in a fresh process.

Dask wall time: run_dask from call to return: loading the catalog, checking and planning the
file, starting and stopping the LocalCluster (its processes import pandas and the pipeline),
the workers expanding, computing and writing results/part-NNNNN.parquet (default partition
size), the client merging the aggregates and writing summary.json and manifest.json; no
charts, workbook or report (as the local baseline writes none), except in the one run
labelled "with views", which also computes the client's sample and draws them, to show what
they cost.
Local wall time: pipeline.analyze(path) (catalog, load, expand, compute) then
.write(dir, plots=False, workbook=False, report=False): results.csv, results.parquet,
(errors.csv) and manifest.json, results only; so it writes results.csv too, the Dask run not.

Measured, in the same run:
  1. seconds per million scenarios with the Dask engine (2-worker LocalCluster) at each of
     --sizes (10M, 40M). Target: the largest within 1.2 x of the smallest per million.
  2. each worker's peak RSS (the worker processes under the client, psutil every 0.5 s),
     also by half of each run (printed), and the client's peak RSS (getrusage; the
     scheduler runs in it too). Targets: workers < 2 GB and
     flat (peak at the largest size <= 1.2 x at the smallest); the client's peak independent
     of the scenario count (<= 1.1 x).
  3. 2 workers against 1 worker at each size (the run's fixed start-up, about 3 s here, is
     a smaller share of a bigger run). Target: >= 1.6 x the throughput.
  4. at --local-size (1M): Dask wall time against the local engine's (the baseline).
     Target: Dask <= 1.5 x local.

    .venv/bin/python benchmarks/bench_dask.py [--sizes 10000000,40000000] [--skip-40m]
        [--local-size 1000000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
D_VALUES = 9  # 256..65536*2
CHIPS_A = 2  # h100|b200

DASK_CHILD = """
import json, resource, sys, threading, time
from pathlib import Path
import psutil
from pipeline import run_dask
from pipeline.run.write import Options

src, out, workers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
views = sys.argv[4] == "1"  # the charts, workbook and report too
options = Options(plots=views, workbook=views, report=views)
me = psutil.Process()
samples, done = [], threading.Event()

def poll():  # the worker processes: spawned children of this one (Nanny -> spawn_main)
    while not done.is_set():
        now = time.perf_counter()
        for p in me.children(recursive=True):
            try:
                if "spawn_main" in " ".join(p.cmdline()):
                    samples.append((now, p.pid, p.memory_info().rss))
            except psutil.Error:
                pass
        done.wait(0.5)

threading.Thread(target=poll, daemon=True).start()
t0 = time.perf_counter()
run = run_dask(src, out, workers=workers, options=options)
wall = time.perf_counter() - t0
done.set()
peak, halves = {}, {}
if samples:
    lo, hi = samples[0][0], samples[-1][0]
    mid = (lo + hi) / 2
    for t, pid, rss in samples:
        peak[pid] = max(peak.get(pid, 0), rss)
        h = halves.setdefault(pid, [0, 0])
        h[t > mid] = max(h[t > mid], rss)
print(json.dumps(dict(
    wall=wall, scenarios=run.scenarios, partitions=run.partitions,
    client_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    worker_peak=list(peak.values()), worker_halves=list(halves.values()),
    samples=len(samples), load=__import__("os").getloadavg(),
)))
"""

LOCAL_CHILD = """
import json, resource, sys, time
import pipeline
src, out = sys.argv[1:3]
t0 = time.perf_counter()
analysis = pipeline.analyze(src)
t1 = time.perf_counter()
analysis.write(out, plots=False, workbook=False, report=False)
t2 = time.perf_counter()
print(json.dumps(dict(
    wall=t2 - t0, analyze=t1 - t0, write=t2 - t1, scenarios=len(analysis.results),
    client_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    load=__import__("os").getloadavg(),
)))
"""


def write_sweep(n: int, path: Path) -> Path:
    """A 2-row sweep file of exactly `n` scenarios: about half in row a, the rest in row b."""
    if n < 2 * D_VALUES * CHIPS_A:
        raise SystemExit(f"size {n:,} too small: at least {2 * D_VALUES * CHIPS_A} scenarios")
    k = n // (2 * D_VALUES * CHIPS_A)
    rest = n - k * D_VALUES * CHIPS_A
    path.write_text(
        "name,op,B,D,F,hardware\n"
        f"a,matmul,1..{k},256..65536*2,4096,h100|b200\n"
        f"b,batched_matmul,1..{rest},1024,1024,mi300x\n",
        encoding="utf-8",
    )
    return path


def child(code: str, *args: object, folder: Path) -> dict:
    """Run `code` in a fresh interpreter (its last stdout line is JSON); then remove `folder`."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, *map(str, args)],
            check=True, capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
    except subprocess.CalledProcessError as exc:
        sys.exit(f"benchmark child failed:\n{exc.stderr[-3000:]}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # a 40M run writes GBs of parquet
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000000,40000000",
                        help="comma-separated scenario counts for the Dask engine")  # fmt: skip
    parser.add_argument("--skip-40m", action="store_true", help="leave out 40,000,000")
    parser.add_argument("--local-size", type=int, default=1_000_000)
    parser.add_argument("--json", action="store_true", help="also print every figure as JSON")
    args = parser.parse_args()
    sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    if args.skip_40m:
        sizes = [s for s in sizes if s != 40_000_000]
    if not sizes:
        raise SystemExit("no sizes left to run")
    small = sizes[0]
    got: dict = {"cores": os.cpu_count(), "load_before": os.getloadavg()}
    gb = 1e9

    def dask_line(label: str, r: dict) -> None:
        n = r["scenarios"]
        print(f"{label:<26} {r['wall']:8.2f} s {n / r['wall']:>12,.0f} rows/s "
              f"{r['wall'] / (n / 1e6):6.3f} s/M  {r['partitions']:>3} parts  workers peak "
              f"{', '.join(f'{p / gb:.2f}' for p in r['worker_peak'])} GB (halves "
              f"{'; '.join(f'{a / gb:.2f}/{b / gb:.2f}' for a, b in r['worker_halves'])})  "
              f"client {r['client_rss'] / gb:.2f} GB  load {r['load'][0]:.1f}",
              flush=True)  # fmt: skip

    with tempfile.TemporaryDirectory(prefix="bench_dask-") as tmp:
        tmp = Path(tmp)
        print(f"{os.cpu_count()} cores, load before {got['load_before'][0]:.2f}", flush=True)

        m = args.local_size
        src = write_sweep(m, tmp / "local.csv")
        local = child(LOCAL_CHILD, src, tmp / "out-local", folder=tmp / "out-local")
        print(f"{'local engine ' + f'{m:,}':<26} {local['wall']:8.2f} s "
              f"{m / local['wall']:>12,.0f} rows/s {local['wall'] / (m / 1e6):6.3f} s/M  "
              f"(analyze {local['analyze']:.2f} s, write {local['write']:.2f} s)  "
              f"client {local['client_rss'] / gb:.2f} GB  load {local['load'][0]:.1f}",
              flush=True)  # fmt: skip
        dask_m = child(DASK_CHILD, src, tmp / "out", 2, 0, folder=tmp / "out")
        dask_line(f"dask 2 workers {m:,}", dask_m)
        got["local"], got["dask_local_size"] = local, dask_m

        runs = {}
        for n in sizes:
            src = write_sweep(n, tmp / f"s{n}.csv")
            runs[n] = child(DASK_CHILD, src, tmp / "out", 2, 0, folder=tmp / "out")
            dask_line(f"dask 2 workers {n:,}", runs[n])
        ones = {}
        for n in sizes:  # at every size: the start-up is a smaller share of a bigger run
            src = tmp / f"s{n}.csv"
            ones[n] = child(DASK_CHILD, src, tmp / "out", 1, 0, folder=tmp / "out")
            dask_line(f"dask 1 worker {n:,}", ones[n])
        got["dask"], got["dask_1_worker"] = runs, ones
        src = tmp / f"s{small}.csv"
        views = child(DASK_CHILD, src, tmp / "out", 2, 1, folder=tmp / "out")
        dask_line(f"dask 2 w. {small:,} with views", views)
        got["dask_with_views"] = views
    got["load_after"] = os.getloadavg()

    def verdict(ok: bool) -> str:
        return "OK" if ok else "MISSED"

    print(f"load after {got['load_after'][0]:.2f} (a shared machine: figures move with it)")
    per_m = {n: r["wall"] / (n / 1e6) for n, r in runs.items()}
    big = sizes[-1]
    if big != small:
        ratio = per_m[big] / per_m[small]
        print(f"1. s/M at {big:,} / at {small:,}: {ratio:.2f} x  [target <= 1.2 x]  "
              f"{verdict(ratio <= 1.2)}")  # fmt: skip
    peaks = [p for r in runs.values() for p in r["worker_peak"]]
    flat = max(runs[big]["worker_peak"]) / max(runs[small]["worker_peak"])
    ok = max(peaks) < 2 * gb and flat <= 1.2
    print(f"2. worker peak RSS {max(peaks) / gb:.2f} GB, at {big:,} / at {small:,}: {flat:.2f} x"
          f"  [target < 2 GB, flat (<= 1.2 x)]  {verdict(ok)}")  # fmt: skip
    clients = {n: r["client_rss"] for n, r in runs.items()}
    grow = clients[big] / clients[small]
    print(f"   client peak RSS {', '.join(f'{n:,}: {c / gb:.2f} GB' for n, c in clients.items())}"
          f" = {grow:.2f} x  [target: independent of count]  {verdict(grow <= 1.1)}")  # fmt: skip
    for n in sizes:
        speedup = ones[n]["wall"] / runs[n]["wall"]
        print(f"3. 2 workers / 1 worker throughput at {n:,}: {speedup:.2f} x  "
              f"[target >= 1.6 x]  {verdict(speedup >= 1.6)}")  # fmt: skip
    vs = dask_m["wall"] / local["wall"]
    print(f"4. dask / local wall time at {m:,}: {vs:.2f} x  [target <= 1.5 x]  "
          f"{verdict(vs <= 1.5)}")  # fmt: skip
    cost = views["wall"] - runs[small]["wall"]
    print(f"   the charts, workbook and report (a sample of 50,000) add {cost:.1f} s at {small:,}; "
          f"client peak with them {views['client_rss'] / gb:.2f} GB")  # fmt: skip
    if args.json:
        print(json.dumps(got, default=str))


if __name__ == "__main__":
    main()
