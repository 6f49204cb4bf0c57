"""Importing a profiler trace (issue 42): `pipeline.import_trace` of a synthetic 100 MB trace.

    .venv/bin/python benchmarks/bench_trace.py [--mb 100] [--repeat 2]

Writes, not timed, in a temporary folder a PyTorch profiler trace in the format the profiler
writes (Chrome trace JSON, one event a line): an H100 in `deviceProperties`; per layer a Python
frame, `aten::linear` over `aten::t` and `aten::addmm`, `aten::mm` with its workspace memset,
`aten::bmm` and an `aten::add`, each GPU op launching through `cudaLaunchKernel` or
`cudaMemsetAsync` with a correlation id to its kernel on stream 7 and the flow (`ac2g`) events
between; shapes from 48 (M, N, K) triples, so calls repeat as layers do. Until the file reaches
`--mb` megabytes; then the same file gzipped (level 1).

Each import runs in a process of its own, alternating, fastest of `--repeat`: its seconds,
trace events per second and peak RSS (`ru_maxrss`) over the process after `import pipeline`.
Baseline in the same run: `json.load` of the same file, the least any reader that holds the
whole trace as Python objects pays.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
H100 = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936,
        "computeMajor": 9, "computeMinor": 0, "numSms": 132}  # fmt: skip
SHAPES = [(m, n, k) for m in (512, 2048, 8192, 16384) for n in (1024, 2816, 4096, 11008)
          for k in (1024, 4096, 8192)]  # fmt: skip
BF16 = "c10::BFloat16"
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_"

CHILD = """
import gzip, json, resource, sys, time
kind, path = sys.argv[1], sys.argv[2]
if kind == "import_trace":
    import pipeline
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
if kind == "import_trace":
    rows = len(pipeline.import_trace(path))
else:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        rows = len(json.load(f)["traceEvents"])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "base": base * 1024, "peak": peak * 1024, "rows": rows}))
"""


class Writer:
    """Trace events, one a line, with the ids the profiler gives them."""

    def __init__(self, out) -> None:
        self.out, self.ts, self.ext, self.corr, self.n = out, 1_000_000.0, 0, 0, 0

    def event(self, **e) -> None:
        self.out.write(("" if self.n == 0 else ",\n") + json.dumps(e, separators=(", ", ": ")))
        self.n += 1

    def op(self, name: str, start: float, dur: float, dims, types, strides=None) -> None:
        self.ext += 1
        args = {"External id": self.ext, "Record function id": 0, "Ev Idx": self.n,
                "Input Dims": dims, "Input type": types,
                "Input Strides": strides or [[] for _ in dims],
                "Concrete Inputs": ["" if d else "1" for d in dims]}  # fmt: skip
        self.event(ph="X", cat="cpu_op", name=name, pid=1234, tid=1234, ts=start, dur=dur,
                   args=args)  # fmt: skip

    def launch(self, start: float, kernel: str, gpu_start: float, gpu_dur: float,
               memset: bool = False) -> None:  # fmt: skip
        self.corr += 1
        c, ext = self.corr, self.ext
        api = "cudaMemsetAsync" if memset else "cudaLaunchKernel"
        self.event(ph="X", cat="cuda_runtime", name=api, pid=1234, tid=1234, ts=start, dur=4.0,
                   args={"External id": ext, "cbid": 211, "correlation": c})  # fmt: skip
        self.event(ph="s", id=c, pid=1234, tid=1234, ts=start, cat="ac2g", name="ac2g")
        args = {"External id": ext, "device": 0, "stream": 7, "correlation": c,
                "context": 1, "queued": 0}  # fmt: skip
        if not memset:
            args.update({"registers per thread": 168, "shared memory": 0, "grid": [132, 1, 1],
                         "block": [384, 1, 1], "est. achieved occupancy %": 0})  # fmt: skip
        self.event(ph="X", cat="gpu_memset" if memset else "kernel",
                   name="Memset (Device)" if memset else kernel, pid=0, tid=7,
                   ts=gpu_start, dur=gpu_dur, args=args)  # fmt: skip
        self.event(ph="f", id=c, pid=0, tid=7, ts=gpu_start, cat="ac2g", name="ac2g", bp="e")

    def layer(self, i: int) -> None:
        m, n, k = SHAPES[i % len(SHAPES)]
        t, g = self.ts, self.ts + 500.0
        self.event(ph="X", cat="python_function", name="model.py(42): forward", pid=1234,
                   tid=1234, ts=t, dur=200.0,
                   args={"Python id": i, "Python parent id": 1})  # fmt: skip
        self.op("aten::linear", t + 1, 60.0, [[m, k], [n, k], [n]], [BF16, BF16, BF16])
        self.op("aten::t", t + 2, 5.0, [[n, k]], [BF16])
        self.op("aten::addmm", t + 10, 40.0, [[n], [m, k], [k, n], [], []],
                [BF16, BF16, BF16, "Scalar", "Scalar"])  # fmt: skip
        self.launch(t + 20, GEMM + "tn_n", g, 80.0)
        self.op("aten::mm", t + 70, 40.0, [[m, n], [n, k]], [BF16, BF16])
        self.launch(t + 75, "", g + 81, 0.8, memset=True)
        self.launch(t + 85, GEMM + "nn_n", g + 82, 75.0)
        self.op("aten::bmm", t + 120, 30.0, [[16, m, 128], [16, 128, m]], [BF16, BF16])
        self.launch(t + 125, "cutlass_80_tensorop_bf16_s16816gemm_64x64", g + 160, 20.0)
        self.op("aten::add", t + 160, 20.0, [[m, n], [m, n], []], [BF16, BF16, "Scalar"])
        self.launch(t + 165, "void at::native::vectorized_elementwise_kernel<4>", g + 181, 3.0)
        self.ts += 300.0


def write_trace(path: Path, megabytes: int) -> int:
    with path.open("w") as out:
        out.write(f'{{\n  "schemaVersion": 1,\n  "deviceProperties": [{json.dumps(H100)}],\n')
        out.write('  "record_shapes": 1,\n  "traceEvents": [\n')
        w, i = Writer(out), 0
        while out.tell() < megabytes * 1_000_000:
            w.layer(i)
            i += 1
        out.write('\n  ],\n  "displayTimeUnit": "ms"\n}\n')
    return w.n


def child(kind: str, path: Path) -> dict:
    run = subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], cwd=ROOT,
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(run.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain, packed = Path(tmp) / "trace.json", Path(tmp) / "trace.json.gz"
        events = write_trace(plain, args.mb)
        with plain.open("rb") as src, gzip.open(packed, "wb", compresslevel=1) as dst:
            shutil.copyfileobj(src, dst)
        print(f"{events:,} trace events: {plain.stat().st_size / 1e6:.1f} MB of JSON, "
              f"{packed.stat().st_size / 1e6:.1f} MB gzipped")  # fmt: skip
        best: dict[tuple[str, str], dict] = {}
        for _ in range(args.repeat):
            for kind in ("import_trace", "json.load"):
                for path in (plain, packed):
                    got = child(kind, path)
                    key = (kind, path.name)
                    if key not in best or got["seconds"] < best[key]["seconds"]:
                        best[key] = got
    for (kind, name), got in best.items():
        peak = (got["peak"] - got["base"]) / 1e6
        print(f"{kind:>12} {name:<14} {got['seconds']:6.2f} s  {events / got['seconds']:>10,.0f}"
              f" events/s  peak RSS {got['peak'] / 1e6:6.0f} MB (+{peak:.0f} MB over the"
              f" process before it)  {got['rows']:,} rows")  # fmt: skip
    for name in (plain.name, packed.name):
        ratio = best[("import_trace", name)]["seconds"] / best[("json.load", name)]["seconds"]
        print(f"import_trace / json.load, {name}: {ratio:.2f} x")


if __name__ == "__main__":
    main()
