"""Transformer rows against the plain rows they expand to (issue 31): ROWS model rows, each a
decode sweep of POINTS batch sizes, computed by `pipeline.analyze`, against a file of the
same ops written out as ordinary rows (einsum and custom rows with their dims, FLOPs, bytes
and count: what the expansion makes), in the same process, alternating.

    .venv/bin/python benchmarks/bench_models.py [--rows 1000] [--points 64] [--repeat 3]

Reported: seconds of analyze (load + compute) for each, rows per second, and the ratio;
issue 31 asks the model rows for at most 1.2 x the plain rows' time.

    .venv/bin/python benchmarks/bench_models.py --planner [--repeat 3]

    .venv/bin/python benchmarks/bench_models.py --serve [--rows 1000] [--points 64]

Serve rows against the transformer rows they expand to (issue 43): ROWS serve rows (isl 2,048,
osl 256), each a sweep of POINTS batch sizes, against ROWS pairs of transformer rows sweeping
the same B, a decode step (T = 1 at S = 2,176) and a prompt's prefill (T = S = 2,048): the
steps each serve point expands to, the serve row itself apart; issue 43 asks at most 1.2 x.

A planner's 3-row file (PLANNER: Llama-3-70B decode over 4 GPUs x 2 dtypes x 4 chip counts
x 9 batches, a TPU fleet, a prefill): `pipeline run` with every output against the same run
with --no-plots --no-workbook --no-report, each a process of its own, alternating; the
fastest of each, their ratio (issue 40 asks at most 5.5 x) and the charts drawn."""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pipeline  # noqa: E402

MODELS = ("llama2-7b", "llama3-8b", "llama3-70b", "mistral-7b", "qwen2.5-72b", "gemma2-27b")
PLAIN = ["name", "op", "hardware", "dtype", "y_dtype", "out_dtype", "chips", "shard", "count",
         "flops", "bytes", "B", "D", "E", "F", "H", "K", "N", "S", "T", "V"]  # fmt: skip


def files(folder: Path, rows: int, points: int) -> tuple[Path, Path]:
    """The model rows' file and the file of the plain rows they expand to."""
    steps = pd.DataFrame(
        {
            "name": [f"m{i}" for i in range(rows)],
            "op": "transformer",
            "model": [MODELS[i % len(MODELS)] for i in range(rows)],
            "hardware": "h100",
            "B": f"1..{points}",
            "T": 1,
            "S": 2048,
        }
    )
    models = folder / "models.csv"
    steps.to_csv(models, index=False)
    ops = pipeline.analyze(models).results
    ops = ops[ops["op"] != "transformer"]
    plain = ops.assign(dtype=ops["x_dtype"])
    custom = plain["op"] == "custom"
    plain["flops"] = (plain["flops"] / plain["count"]).where(custom)
    plain["bytes"] = (plain["hbm_bytes"] / plain["count"]).where(custom)
    plain = plain[[c for c in PLAIN if c in plain.columns]]
    for dim in ("B", "D", "E", "F", "H", "K", "N", "S", "T", "V"):
        if dim in plain.columns:
            plain[dim] = plain[dim].astype("Int64")
    path = folder / "plain.csv"
    plain.to_csv(path, index=False)
    return models, path


def serve_files(folder: Path, rows: int, points: int) -> tuple[Path, Path]:
    """The serve rows' file and the file of the transformer rows they expand to."""
    common = {"name": [f"s{i}" for i in range(rows)],
              "model": [MODELS[i % len(MODELS)] for i in range(rows)],
              "hardware": "h100", "B": f"1..{points}"}  # fmt: skip
    serve = folder / "serve.csv"
    pd.DataFrame({**common, "op": "serve", "isl": 2048, "osl": 256}).to_csv(serve, index=False)
    steps = pd.concat(
        [pd.DataFrame({**common, "op": "transformer", "T": t, "S": s}).assign(
            name=lambda f, k=k: f["name"] + k) for k, t, s in (("p", 2048, 2048),
                                                               ("d", 1, 2048 + 128))]
    )  # fmt: skip
    plain = folder / "steps.csv"
    steps.sort_index(kind="stable").to_csv(plain, index=False)
    return serve, plain


PLANNER = """name,op,model,hardware,dtype,chips,shard,B,T,S
decode,transformer,llama3-70b,h100|h200|b200|mi300x,bf16|fp8,1|2|4|8,N,1..256*2,1,8192
decode_tpu,transformer,llama3-70b,tpu-v5e|tpu-v6e|tpu7x,bf16,1|4|8|16,N,1..256*2,1,8192
prefill,transformer,llama3-70b,h100,bf16,8,N,1,2048,2048
"""
BARE = ("--no-plots", "--no-workbook", "--no-report")


def planner(repeat: int) -> None:
    """The planner's file, every output against the bare analysis (see the module)."""
    command = [str(Path(sys.executable).parent / "pipeline"), "run", "-q", "--force"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "planner.csv"
        path.write_text(PLANNER)
        best = {"full": float("inf"), "bare": float("inf")}
        cpu = dict(best)  # CPU seconds of the run's processes: less swayed by other work
        for _ in range(repeat):
            for label, extra in (("full", ()), ("bare", BARE)):
                out = Path(tmp) / label
                used = _children_cpu()
                start = time.perf_counter()
                subprocess.run([*command, str(path), "-o", str(out), *extra], check=True)
                best[label] = min(best[label], time.perf_counter() - start)
                cpu[label] = min(cpu[label], _children_cpu() - used)
        charts = len(list((Path(tmp) / "full").rglob("plots/*.png")))
        scenarios = len(pd.read_parquet(next((Path(tmp) / "bare").rglob("results.parquet"))))
    print(f"planner's file, {scenarios:,} scenarios, {charts} charts: every output "
          f"{best['full']:.2f} s, bare analysis {best['bare']:.2f} s: "
          f"{best['full'] / best['bare']:.2f} x (issue 40 asks <= 5.5 x); CPU seconds "
          f"{cpu['full']:.2f} against {cpu['bare']:.2f}: "
          f"{cpu['full'] / cpu['bare']:.2f} x")  # fmt: skip


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--points", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--planner", action="store_true", help="the planner's 3-row file")
    parser.add_argument("--serve", action="store_true", help="serve rows against their steps")
    args = parser.parse_args()
    if args.planner:
        planner(args.repeat)
        return
    with tempfile.TemporaryDirectory() as tmp:
        made = serve_files if args.serve else files
        models, plain = made(Path(tmp), args.rows, args.points)
        best = {"models": float("inf"), "plain": float("inf")}
        cpu = dict(best)  # this process's CPU seconds: less swayed by other work
        sizes = {}
        for _ in range(args.repeat):  # alternating: a busy machine slows both alike
            for label, path in (("models", models), ("plain", plain)):
                start, used = time.perf_counter(), time.process_time()
                a = pipeline.analyze(path, max_rows=10_000_000)
                best[label] = min(best[label], time.perf_counter() - start)
                cpu[label] = min(cpu[label], time.process_time() - used)
                assert not a.problem_list, a.problem_list[:3]
                sizes[label] = len(a.results)
    for label in ("models", "plain"):
        print(f"{label:>7}: {best[label]:6.2f} s (CPU {cpu[label]:.2f} s), {sizes[label]:,} "
              f"result rows, {sizes[label] / best[label]:,.0f} rows/s")  # fmt: skip
    what = "serve / steps" if args.serve else "models / plain"
    print(f"{what}: {best['models'] / best['plain']:.2f} x, CPU {cpu['models'] / cpu['plain']:.2f}"
          f" x (issue {43 if args.serve else 31} asks <= 1.2 x)")  # fmt: skip


if __name__ == "__main__":
    main()
