"""Chart drawing time for a 100,000-row run, serial against parallel.

Builds a scenario CSV in a temporary folder (mixed ops, chips and dtypes, two-chip sharded rows,
a few sweeps), analyzes it, then draws every chart `pipeline run` would draw (the default cap)
one by one in this process and on forked workers, one per core, biggest first (as the run
does), and prints the totals (best of three) and each chart's seconds.

    .venv/bin/python benchmarks/bench_plots.py [ROWS]
"""

from __future__ import annotations

import csv
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pipeline  # noqa: E402
from pipeline.limits import DEFAULT_MAX_CHARTS  # noqa: E402
from pipeline.render.charts import png  # noqa: E402
from pipeline.render.charts.data import chart_frame  # noqa: E402
from pipeline.render.charts.plan import plan_charts  # noqa: E402

HEADER = [
    "name", "op", "B", "D", "F", "N", "S", "hardware", "dtype", "x_dtype", "y_dtype",
    "out_dtype", "compute_dtype", "chips", "shard", "flops", "bytes",
]  # fmt: skip
# (hardware, dtypes its catalog entry has a peak for)
CHIPS = [
    ("tpu-v5e", ("bf16", "int8")),
    ("tpu-v5p", ("bf16", "int8")),
    ("tpu-v6e", ("bf16", "int8")),
    ("h100", ("bf16", "fp8", "int8", "fp32")),
    ("a100", ("bf16", "int8", "fp32")),
    ("b200", ("bf16", "fp8", "fp4")),
]
SWEEPS = [  # (name, hardware, B cell, D, F, compute-dtype setup)
    ("sweep_v5e_d4096", "tpu-v5e", "1..1000", 4096, 4096, "mixed"),
    ("sweep_v5e_d1024", "tpu-v5e", "1..1000", 1024, 1024, "mixed"),
    ("sweep_h100_d8192", "h100", "1..1000", 8192, 8192, "bf16"),
    ("sweep_b200_d8192", "b200", "1..1000", 8192, 8192, "fp8"),
    ("sweep_v6e_d16384", "tpu-v6e", "1..1000", 16384, 16384, "bf16"),
]
POW2 = 2 ** np.arange(9, 18)  # 512 .. 131072


def _row(**cells) -> list[str]:
    return [str(cells.get(c, "")) for c in HEADER]


def write_scenarios(path: Path, rows: int, seed: int = 0) -> None:
    """A deterministic mixed scenario file that expands to exactly `rows` scenarios."""
    rng = np.random.default_rng(seed)
    sweep_rows = 1000 * len(SWEEPS) + 13 * 3
    plain = rows - sweep_rows
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(HEADER)
        for name, hw, b, d, f, setup in SWEEPS:
            dtypes = (
                {"x_dtype": "bf16", "y_dtype": "int8", "out_dtype": "bf16", "compute_dtype": "bf16"}
                if setup == "mixed"
                else {"dtype": setup}
            )
            out.writerow(_row(name=name, op="matmul", B=b, D=d, F=f, hardware=hw, **dtypes))
        out.writerow(  # a two-dim sweep: 13 x 3 rows, one line per D
            _row(name="sweep_2d", op="matmul", B="1..4096*2", D="1024|4096|16384", F=8192,
                 hardware="tpu-v5p", dtype="bf16")
        )  # fmt: skip
        ops = rng.choice(["matmul", "dot", "batched_matmul", "BSD,DF->BSF", "custom"], plain,
                         p=[0.6, 0.05, 0.1, 0.2, 0.05])  # fmt: skip
        chip = rng.integers(0, len(CHIPS), plain)
        for i in range(plain):
            hw, dtypes = CHIPS[chip[i]]
            dtype = dtypes[rng.integers(0, len(dtypes))]
            cells = {"name": f"s{i}", "hardware": hw, "dtype": dtype}
            op = ops[i]
            b = int(2 ** rng.integers(0, 14))
            d, f = (int(v) for v in rng.choice(POW2, 2))
            if op == "matmul":
                cells.update(op="matmul", B=b, D=d, F=f)
                if rng.random() < 0.1:  # sharded over two chips along the contracted dim
                    cells.update(chips=2, shard="D")
                elif rng.random() < 0.15 and dtype == "bf16":  # int8 weights, bf16 compute
                    del cells["dtype"]
                    cells.update(x_dtype="bf16", y_dtype="int8", out_dtype="bf16")
                    cells.update(compute_dtype="bf16")
            elif op == "dot":
                cells.update(op="dot", N=int(2 ** rng.integers(10, 28)))
            elif op == "batched_matmul":
                cells.update(op="batched_matmul", B=min(b, 256), D=min(d, 4096), F=min(f, 4096))
            elif op == "custom":
                cells.update(op="custom", flops=f"{rng.uniform(1e9, 1e15):.6g}",
                             bytes=f"{rng.uniform(1e6, 1e11):.6g}")  # fmt: skip
            else:
                cells.update(op=op, B=min(b, 64), S=int(2 ** rng.integers(7, 14)), D=d, F=f)
            out.writerow(_row(**cells))


_PLANNED: list = []  # the charts a forked worker draws


def _draw(k: int) -> int:
    return len(png(_PLANNED[k].build()))


def main(rows: int = 100_000, repeats: int = 3) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = tmp / "bench.csv"
        write_scenarios(path, rows)
        t = time.perf_counter()
        analysis = pipeline.analyze(path)
        prep = time.perf_counter() - t
        problems = len(analysis.problem_list)
        print(f"{len(analysis.results):,} scenarios ({problems} rejected) analyzed in {prep:.2f} s")
        s = analysis.summary
        planned = plan_charts(chart_frame(analysis), list(analysis.hardware), s.per_hardware,
                              s.overrides)[:DEFAULT_MAX_CHARTS]  # fmt: skip
        _PLANNED[:] = planned
        best: dict[str, float] = {}
        seconds: dict[str, float] = {}
        parallel = f"forked workers, one per core ({os.cpu_count()})"
        for _ in range(repeats):  # interleaved, best of `repeats`: other load on the box is noise
            start = time.perf_counter()
            for chart in planned:  # in this process, one by one, each timed
                t = time.perf_counter()
                png(chart.build())
                seconds[chart.chart.path] = time.perf_counter() - t
            best["serial"] = min(best.get("serial", np.inf), time.perf_counter() - start)
            start = time.perf_counter()  # as `pipeline run` draws them: forked, biggest first
            order = sorted(range(len(planned)), key=lambda k: -planned[k].cost)
            with multiprocessing.get_context("fork").Pool(os.cpu_count()) as pool:
                pool.map(_draw, order, chunksize=1)
            best[parallel] = min(best.get(parallel, np.inf), time.perf_counter() - start)
        print(f"{len(planned)} charts (the default cap {DEFAULT_MAX_CHARTS})")
        load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
        print(f"best of {repeats} (load average {load}):")
        for label, value in best.items():
            print(f"  {label:<36} {value:6.2f} s")
        print("per chart (last serial run, seconds):")
        for chart in planned:
            print(f"  {seconds[chart.chart.path]:6.3f}  {chart.chart.path}")
        worst = max(seconds.values())
        print(f"slowest chart {worst:.3f} s; mean {np.mean(list(seconds.values())):.3f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
