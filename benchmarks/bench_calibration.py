"""Calibration (issue 32), two figures:

1. `pipeline.calibrate` on MEASURED measured rows (matmul, custom and AllGather rows on the
   benchmark's chips, half bf16 and half fp8, their times made from known efficiencies and
   overheads with 3 % noise): seconds end
   to end (reading and computing the rows, the fit with its k-fold held-out error, the file,
   chart and page), and of the fit alone.
2. `pipeline run FILE` without `--calibration`, with the fitted one and with `--calibration
   published` (every output), on the benchmark file of ROWS rows (benchmarks/generate.py),
   each in a process of its own, alternating, the fastest of REPEAT each; issues 32 and 41
   ask a calibrated run for at most 1.1 x the plain one.

    .venv/bin/python benchmarks/bench_calibration.py [--measured 100000] [--rows 1000000]
        [--repeat 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402
from benchmarks.generate import write  # noqa: E402
from pipeline.calibration.fit import fit  # noqa: E402

FP8_CHIPS = ["h100", "h200", "b200", "gb200"]  # chips with an fp8 peak: each dtype on each
TRUE = {"matmul": (0.8, 0.7, 1.0, 2e-6), "custom": (0.6, 0.9, 1.0, 5e-6),
        "all_gather": (1.0, 1.0, 0.85, 10e-6)}  # fmt: skip


def measured_file(path: Path, n: int, chips: list[str]) -> None:
    """n measured rows, a third each matmul, custom and AllGather, over `chips`."""
    rng = np.random.default_rng(0)
    k = n // 3
    hw = np.array(chips)[rng.integers(0, len(chips), n)]
    frame = pd.DataFrame({"name": [f"r{i}" for i in range(n)], "hardware": hw})
    frame["op"] = ["matmul"] * k + ["custom"] * k + ["all_gather"] * (n - 2 * k)
    dims = {d: (2 ** rng.uniform(lo, hi, n)).astype(int) for d, lo, hi in
            (("B", 0, 12), ("D", 8, 14), ("F", 8, 15))}  # fmt: skip
    for d, v in dims.items():
        frame[d] = np.where(frame["op"] == "matmul", v, 0)
    frame["flops"] = np.where(frame["op"] == "custom", 2 ** rng.uniform(20, 40, n), np.nan)
    frame["bytes"] = np.where(
        frame["op"] != "matmul", (2 ** rng.uniform(16, 32, n)).round(), np.nan
    )
    frame["chips"] = np.where(frame["op"] == "all_gather", 8, 1)
    frame["dtype"] = np.where(rng.random(n) < 0.5, "bf16", "fp8")
    for d in dims:
        frame[d] = frame[d].astype("Int64").replace(0, pd.NA)
    r = pipeline.analyze(frame, max_rows=10_000_000).results
    kind = frame["op"].to_numpy()
    e = {i: np.array([TRUE[k][i] for k in kind]) for i in range(4)}
    t = np.maximum.reduce([r["t_math"] / e[0], r["t_hbm"] / e[1], r["t_network"] / e[2]]) + e[3]
    frame["measured_seconds"] = np.asarray(t) * rng.lognormal(0, 0.03, n)
    frame.to_csv(path, index=False)


def run(scenarios: Path, out: Path, *extra: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pipeline", "run", str(scenarios), "-o", str(out),
                    "-q", "--force", *extra], check=True, cwd=ROOT)  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--measured", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        measured = folder / "measured.csv"
        measured_file(measured, args.measured, FP8_CHIPS)
        start = time.perf_counter()
        done = pipeline.calibrate(measured, folder / "cal.toml")
        whole = time.perf_counter() - start
        start = time.perf_counter()
        fit(done.rows)
        alone = time.perf_counter() - start
        cal = done.calibration
        print(f"calibrate, {args.measured:,} measured rows: {whole:.2f} s end to end "
              f"(the fit alone {alone:.2f} s); held-out error median / p90 "
              f"{cal.heldout_median:.1%} / {cal.heldout_p90:.1%}, the floor's "
              f"{cal.floor_median:.1%} / {cal.floor_p90:.1%}")  # fmt: skip
        scenarios = folder / "bench.csv"
        write(args.rows, scenarios)
        extra = {"plain": (), "calibrated": ("--calibration", str(folder / "cal.toml")),
                 "published": ("--calibration", "published")}  # fmt: skip
        best = dict.fromkeys(extra, float("inf"))
        for i in range(args.repeat):  # alternating: a busy machine slows them alike
            for label, options in extra.items():
                best[label] = min(best[label], run(scenarios, folder / f"{label}{i}", *options))
        for label, seconds in best.items():
            print(f"run {label:>10}: {seconds:6.2f} s, {args.rows / seconds:,.0f} scenarios/s")
        for label in ("calibrated", "published"):
            print(f"{label} / plain: {best[label] / best['plain']:.3f} x (issues 32 and 41 ask "
                  "<= 1.1 x)")  # fmt: skip


if __name__ == "__main__":
    main()
