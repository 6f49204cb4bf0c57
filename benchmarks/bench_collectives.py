"""Collectives benchmark: 1,000,000 scenarios of which 10 % are collective rows (AllGather,
ReduceScatter, AllReduce, AllToAll, some derated) against the same count of matmuls, in the
same run.

Prints, for each mix, the best of --repeat runs of the model (`compute_roofline` on the
checked frame) and of the checks (`load_scenarios`), in rows/second, and the ratios
mix / matmuls. Target: the mix computes in <= 1.1 x the time of the matmuls.

    .venv/bin/python benchmarks/bench_collectives.py [--rows 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generate import CHIPS, generate  # noqa: E402
from pipeline.catalogs.hardware import load_catalog  # noqa: E402
from pipeline.model.roofline import compute_roofline  # noqa: E402
from pipeline.scenarios import load_scenarios  # noqa: E402

COLLECTIVES = ["all_gather", "reduce_scatter", "all_reduce", "all_to_all"]


def matmuls(rows: int, seed: int = 0):
    """Matmuls only: the generator's chips, dtypes and sharding."""
    frame = generate(rows, seed)
    frame["op"] = "matmul"
    frame["shard"] = np.where(frame["chips"] > 1, np.where(frame["shard"] == "F", "F", "D"), "")
    frame["flops"] = np.nan
    frame["bytes"] = np.nan
    return frame


def with_collectives(rows: int, share: float = 0.1, seed: int = 1):
    """The matmul frame with `share` of its rows turned into collectives (a quarter derated)."""
    frame = matmuls(rows, seed)
    rng = np.random.default_rng(seed)
    pick = rng.random(rows) < share
    n = int(pick.sum())
    dims = ["B", "D", "F", "S", "N"]
    frame = frame.astype({"bytes": object, "flops": object, **dict.fromkeys(dims, object)})
    frame.loc[pick, "op"] = rng.choice(COLLECTIVES, n)
    frame.loc[pick, "bytes"] = 2 ** rng.integers(10, 34, n)
    frame.loc[pick, "chips"] = rng.choice([2, 4, 8, 16, 64], n)
    frame.loc[pick, "shard"] = ""
    frame.loc[pick, dims] = ""
    frame["network_efficiency"] = np.where(pick & (rng.random(rows) < 0.25), 0.9, np.nan)
    return frame


def best(fn, repeat: int) -> tuple[object, float]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    catalog = load_catalog()
    assert set(CHIPS) - {"v5p"} <= set(catalog.aliases)
    with tempfile.TemporaryDirectory() as tmp:
        timings = {}
        for label, build in (("matmuls", matmuls), ("10% collectives", with_collectives)):
            path = Path(tmp) / f"{label.split()[0]}.csv"
            build(args.rows).to_csv(path, index=False)
            loaded, t_load = best(lambda p=path: load_scenarios(p, catalog, args.rows), args.repeat)
            assert not loaded.problems, loaded.problems[:3]
            results, t_model = best(lambda f=loaded.frame: compute_roofline(f), args.repeat)
            kinds = results["collective"].astype(str)
            timings[label] = (t_load, t_model)
            print(
                f"{label:16s} {len(results):,} rows ({int((results['flops'] == 0).sum()):,} "
                f"collective rows, {int((kinds == 'all_reduce').sum()):,} with an AllReduce): "
                f"checks {t_load:.2f} s ({len(results) / t_load:,.0f} rows/s), "
                f"model {t_model:.3f} s ({len(results) / t_model:,.0f} rows/s)"
            )
    (base_load, base_model), (mix_load, mix_model) = timings.values()
    print(
        f"mix / matmuls: model {mix_model / base_model:.2f}x (target <= 1.1x), "
        f"checks {mix_load / base_load:.2f}x"
    )


if __name__ == "__main__":
    main()
