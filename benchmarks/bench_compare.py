"""Comparison benchmark: `pipeline.compare` on two 1,000,000-row results.parquet files.

Generates a run (benchmarks/generate.py rows through pipeline.analyze), writes its
results.parquet, perturbs a copy (rows dropped, added, renamed, a bound flipped, times moved,
and a chip's HBM bandwidth changed under every row of it) and writes that; then, in a fresh
process, in the same run:
  (a) reading both results.parquet files into DataFrames (the floor), and
  (b) pipeline.compare on the two files (reading included), and writing changes.csv/.html,
and that process's peak memory. Targets: (b) <= 2 x (a), memory < 2 GB.

    .venv/bin/python benchmarks/bench_compare.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pipeline  # noqa: E402
from benchmarks.generate import generate  # noqa: E402
from pipeline.run.tables import write_parquet  # noqa: E402

CHILD = """
import json, resource, sys, time
import pyarrow.parquet as pq
import pipeline
old, new, out = sys.argv[1:4]
t = time.perf_counter()
a, b = pq.read_table(old).to_pandas(), pq.read_table(new).to_pandas()
read = time.perf_counter() - t
del a, b
t = time.perf_counter()
c = pipeline.compare(old, new)
compare = time.perf_counter() - t
t = time.perf_counter()
c.write(out)
write = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(dict(read=read, compare=compare, write=write, rss=rss, summary=c.summary())))
"""


def perturbed(results, seed: int = 1):
    """A copy of `results` with some rows changed the ways a nightly run changes them."""
    rng = np.random.default_rng(seed)
    new = results.copy()
    n = len(new)
    pick = rng.permutation(n)
    slower, flipped, dropped, renamed = np.split(pick[:40_000], 4)
    t = new["t_lower"].to_numpy(copy=True)
    t[slower] *= 1.2
    new["t_lower"] = t
    bound = new["bound"].astype(str).to_numpy(copy=True)
    bound[flipped] = np.where(bound[flipped] == "compute", "memory", "compute")
    new["bound"] = bound
    v5e = (new["hardware"] == "tpu-v5e").to_numpy()
    new.loc[v5e, "hbm_bandwidth"] = 8.3e11
    names = new["name"].to_numpy(dtype=object, copy=True)
    names[renamed] = [f"{x}-new" for x in names[renamed]]
    new["name"] = names
    return new.drop(new.index[dropped])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        results = pipeline.analyze(generate(args.rows)).results
        write_parquet(results, folder / "old.parquet")
        write_parquet(perturbed(results), folder / "new.parquet")
        print(f"generated 2 x {len(results):,} rows in {time.perf_counter() - t:.1f} s")
        del results
        argv = [sys.executable, "-c", CHILD, *(str(folder / n) for n in ("old.parquet",
                "new.parquet", "changes"))]  # fmt: skip
        run = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
    ratio = run["compare"] / run["read"]
    print(f"(a) read both results.parquet      {run['read']:6.2f} s")
    print(f"(b) pipeline.compare (reads too)   {run['compare']:6.2f} s  = {ratio:.2f} x (a)"
          f"  [target <= 2 x]  {'OK' if ratio <= 2 else 'MISSED'}")  # fmt: skip
    print(f"    write changes.csv/.html        {run['write']:6.2f} s")
    print(f"    peak memory (read, compare, write) {run['rss'] / 1e9:.2f} GB  [target < 2 GB]")
    print(f"    {run['summary']}")


if __name__ == "__main__":
    main()
