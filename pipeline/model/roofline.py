"""The vectorized roofline model (docs/model.md; book: "All About Rooflines"). No I/O.

compute_roofline() takes the validated scenario frame from `scenarios.load_scenarios` and
returns a new frame with the metric columns. Rows are grouped by einsum; each group is computed
in one numpy pass over whole columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.collectives import (
    ALL_REDUCE,
    ALL_TO_ALL_CODE,
    KINDS,
    PHASES,
    collective_footprint,
    collective_time,
    latency_knee,
)
from pipeline.model.dtypes import DTYPE_COLUMNS, DTYPES, TENSOR_DTYPES
from pipeline.model.ops import is_dim, parse_op
from pipeline.model.roofs import ridge_point
from pipeline.model.serve import DRAFT_COLUMNS

EFFICIENCIES = ("compute_efficiency", "hbm_efficiency", "network_efficiency")
BOUNDS = ("compute", "memory", "network")
# what the critical batch is, as every output says it (critical_batch() computes it)
CRITICAL_BATCH = "the smallest batch at which the op is compute-bound, everything else fixed"
# results.csv's fixed leading columns (docs/outputs.md#resultscsv; tdp and energy after the
# step columns, from model.cost); dims, measured_*, notes and extras follow
RESULT_COLUMNS = (
    "name", "series", "op", "einsum", "hardware", "chips", "shard", "link", *DTYPE_COLUMNS,
    "flops", "flops_per_chip", "bytes_read",
    "bytes_written", "hbm_bytes", "network_bytes", "collective", "peak_flops", "hbm_bandwidth",
    "link_bandwidth", "intensity", "critical_intensity", "t_math", "t_hbm", "t_network",
    "t_lower", "t_upper", "bound", "attainable_flops", "peak_fraction", "critical_batch",
    "memory_footprint", "hbm_capacity", "fits", *EFFICIENCIES, "tdp", "energy",
)  # fmt: skip
KINDS_OF_OP = ("einsum", "custom", "collective")  # an einsum includes matmul, dot, ...
# the facts, row for row beside the results (docs/api.md#facts): internal, not results.csv's
FACTS = (
    "kind", "in_sweep", "swept", "marks", "in_step", "peak_flops_derated", "hbm_bandwidth_derated",
    "link_bandwidth_derated", "network_intensity", "network_critical_intensity",
    "link_latency", "latency_floor", "latency_knee",
)  # fmt: skip
# columns of the validated scenario frame that are inputs to the model, not carried through
INTERNAL = frozenset(
    {
        "line", "name", "series", "op", "einsum", "hardware", "chips", "shard", "link",
        *DTYPE_COLUMNS, "peak_flops", "hbm_bandwidth",
        "hbm_capacity", "link_bandwidth", "link_topology", "link_latency", "flops", "bytes",
        "measured_seconds", "notes", "own_numbers", "given", "swept", "marks", "count",
        "step_of", "block_of", "in_step", "moe_k", "moe_width", "op_total_flops",
        *EFFICIENCIES, "tdp",
        "isl", "osl", "ttft_target", "tpot_target", "batch_at_target", *DRAFT_COLUMNS,  # serve
    }
)  # fmt: skip


def _bytes_of(dtype: pd.Series) -> np.ndarray:
    codes, uniques = pd.factorize(dtype)
    return np.array([DTYPES[u][0] for u in uniques], dtype=float)[codes]


def _prod(columns: list[np.ndarray], n: int) -> np.ndarray:
    out = np.ones(n, dtype=float)
    for c in columns:
        out = out * c
    return out


def bound_codes(t_math: np.ndarray, t_hbm: np.ndarray, t_network: np.ndarray) -> np.ndarray:
    """Index into BOUNDS: compute only when t_math is strictly largest; memory wins a tie with
    network (book: compute-bound iff T_math > T_comms)."""
    compute = (t_math > t_hbm) & (t_math > t_network)
    memory = ~compute & (t_hbm >= t_network)
    return np.where(compute, 0, np.where(memory, 1, 2)).astype(np.int8)


def compute_roofline(scenarios: pd.DataFrame) -> pd.DataFrame:
    """Add FLOPs, bytes, times, bound, intensities, critical batch and capacity columns."""
    return compute_record(scenarios)[0]


def compute_record(scenarios: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The results (the public columns of results.csv) and, row for row, the facts renderers
    read and must never work out again (FACTS: the op's kind, whether the row is a sweep
    point, the derated rates it was timed at, its network intensity, its link's hop latency,
    its collective's latency floor and the V at which it leaves that floor)."""
    # a rate that underflows or a time past float64 comes out as inf or NaN, silently: the
    # caller refuses those rows (refused_rows), so numpy's warnings would only be noise
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        return _compute(scenarios)


def _compute(scenarios: pd.DataFrame) -> pd.DataFrame:
    frame = scenarios.reset_index(drop=True)
    n = len(frame)
    cols = {
        k: np.full(n, np.nan)
        for k in (
            "flops",
            "flops_per_chip",
            "bytes_read",
            "bytes_written",
            "x_bytes",
            "y_bytes",
            "out_bytes",
            "batch",
        )
    }
    kind = np.zeros(n, dtype=np.int8)  # the row's collective, a code into KINDS
    chips = frame["chips"].to_numpy(dtype=float)
    shard = frame["shard"].to_numpy(dtype=object)
    xb, yb, ob = (_bytes_of(frame[c]) for c in TENSOR_DTYPES)
    op_codes, ops = pd.factorize(frame["op"])

    groups = frame.groupby("einsum", sort=False).indices  # one op signature per group
    batch_sharded = np.zeros(n, dtype=bool)  # split along one of its batch dims
    for einsum, idx in groups.items():
        if einsum == "":
            continue
        sig = parse_op(einsum)
        c = chips[idx]
        s = shard[idx]
        full = {d: frame[d].to_numpy(dtype=float)[idx] for d in sig.dims}
        local = {d: np.where(s == d, np.ceil(v / c), v) for d, v in full.items()}
        m = len(idx)
        factor = 2.0 if sig.contracted else 1.0
        cols["flops"][idx] = factor * _prod(list(full.values()), m)
        cols["flops_per_chip"][idx] = factor * _prod(list(local.values()), m)
        x = _prod([local[d] for d in sig.x], m) * xb[idx]
        y = _prod([local[d] for d in sig.y], m) * yb[idx]
        o = _prod([local[d] for d in sig.out], m) * ob[idx]
        cols["x_bytes"][idx], cols["y_bytes"][idx], cols["out_bytes"][idx] = x, y, o
        cols["bytes_read"][idx] = x + y
        cols["bytes_written"][idx] = o
        if sig.batch:
            cols["batch"][idx] = _prod([local[d] for d in sig.batch], m)
            batch_sharded[idx] = np.isin(s, list(sig.batch))
        if sig.contracted:
            reduce = np.isin(s, list(sig.contracted)) & (c > 1)
            kind[idx[reduce]] = KINDS.index(ALL_REDUCE)

    given_bytes = frame["bytes"].to_numpy(dtype=float)
    op_kind = np.array([KINDS.index(o) if o in KINDS else 0 for o in ops], dtype=np.int8)
    row_kind = op_kind[op_codes] if len(ops) else np.zeros(n, dtype=np.int8)
    collective_row = row_kind > 0  # an op that is itself a collective: no FLOPs, no HBM term
    kind = np.where(collective_row, row_kind, kind)
    for name in ("flops", "flops_per_chip", "bytes_read", "bytes_written"):
        cols[name][collective_row] = 0.0
    custom = np.zeros(n, dtype=bool)
    custom[groups.get("", [])] = True
    custom &= ~collective_row
    cols["flops"][custom] = frame["flops"].to_numpy(dtype=float)[custom]
    cols["flops_per_chip"][custom] = cols["flops"][custom]
    cols["bytes_read"][custom] = given_bytes[custom]
    cols["bytes_written"][custom] = 0.0

    # each rate times its efficiency (docs/model.md#efficiency); peak_fraction stays nominal
    e_compute, e_hbm, e_network = (
        frame[c].to_numpy(dtype=float) if c in frame.columns else np.ones(n) for c in EFFICIENCIES
    )
    peak = frame["peak_flops"].to_numpy(dtype=float)
    hbm_bw = frame["hbm_bandwidth"].to_numpy(dtype=float)
    link_bw = frame["link_bandwidth"].to_numpy(dtype=float)
    rate, hbm_rate, link_rate = e_compute * peak, e_hbm * hbm_bw, e_network * link_bw
    topology = frame["link_topology"].to_numpy(dtype=object) == "ring"  # True: ring, else switch
    latency = frame["link_latency"].to_numpy(dtype=float)
    phases = PHASES[kind]
    all_to_all = kind == ALL_TO_ALL_CODE

    flops_pc = cols["flops_per_chip"]
    hbm_bytes = cols["bytes_read"] + cols["bytes_written"]
    network_bytes = np.where(
        collective_row, given_bytes, np.where(phases > 0, cols["out_bytes"], 0.0)
    )
    # a collective row does no math and touches no HBM, whatever its dtype's peak (or none)
    t_math = np.where(collective_row, 0.0, flops_pc / rate)
    t_hbm = np.where(collective_row, 0.0, hbm_bytes / hbm_rate)
    t_network = collective_time(
        network_bytes, chips, link_rate, topology, latency, phases, all_to_all
    )
    t_lower = np.maximum(np.maximum(t_math, t_hbm), t_network)
    t_upper = t_math + t_hbm + t_network
    bound = bound_codes(t_math, t_hbm, t_network)
    attainable = flops_pc / t_lower
    capacity = frame["hbm_capacity"].to_numpy(dtype=float)
    footprint = np.where(
        collective_row, collective_footprint(kind, network_bytes, chips), hbm_bytes
    )
    fits = pd.arrays.BooleanArray(footprint <= capacity, np.isnan(capacity))
    intensity = flops_pc / hbm_bytes  # a collective row: 0 / 0, no intensity
    critical_intensity = np.where(collective_row, np.nan, ridge_point(rate, hbm_rate))

    critical = critical_batch(
        batch=cols["batch"],
        flops=flops_pc,
        batch_bytes=cols["x_bytes"] + cols["out_bytes"],
        fixed_bytes=cols["y_bytes"],
        network_bytes=network_bytes,
        chips=chips,
        peak=rate,
        hbm_bw=hbm_rate,
        link_bw=link_rate,
        topology=topology,
        latency=latency,
        phases=phases,
    )
    critical = np.where(batch_sharded, (critical - 1) * chips + 1, critical)
    if "count" in frame.columns:  # n identical ops, one after another (docs/model.md#count):
        times = frame["count"].to_numpy(dtype=float)  # n x one op's work and time; its
        cols = {**cols, **{k: cols[k] * times for k in ("flops", "bytes_read", "bytes_written")}}
        flops_pc, hbm_bytes, network_bytes = (
            v * times for v in (flops_pc, hbm_bytes, network_bytes)
        )
        t_math, t_hbm, t_network, t_lower, t_upper = (
            v * times for v in (t_math, t_hbm, t_network, t_lower, t_upper)
        )  # intensity, bound, critical batch, attainable rate and footprint stay one op's

    result = pd.DataFrame(
        {
            "name": frame["name"],
            "series": frame["series"],
            "op": frame["op"],
            "einsum": frame["einsum"],
            "hardware": frame["hardware"],
            "chips": frame["chips"].astype("int64"),
            "shard": frame["shard"],
            "link": frame["link"],
            "x_dtype": frame["x_dtype"],
            "y_dtype": frame["y_dtype"],
            "out_dtype": frame["out_dtype"],
            "compute_dtype": frame["compute_dtype"],
            "flops": cols["flops"],
            "flops_per_chip": flops_pc,
            "bytes_read": cols["bytes_read"],
            "bytes_written": cols["bytes_written"],
            "hbm_bytes": hbm_bytes,
            "network_bytes": network_bytes,
            "collective": pd.Categorical.from_codes(kind, categories=list(KINDS)),
            "peak_flops": peak,
            "hbm_bandwidth": hbm_bw,
            "link_bandwidth": link_bw,
            "intensity": intensity,
            "critical_intensity": critical_intensity,
            "t_math": t_math,
            "t_hbm": t_hbm,
            "t_network": t_network,
            "t_lower": t_lower,
            "t_upper": t_upper,
            "bound": pd.Categorical.from_codes(bound, categories=list(BOUNDS)),
            "attainable_flops": attainable,
            "peak_fraction": np.where(collective_row, 0.0, attainable / peak),
            "critical_batch": int_or_na(critical),
            "memory_footprint": footprint,
            "hbm_capacity": capacity,
            "fits": fits,
            "compute_efficiency": e_compute,
            "hbm_efficiency": e_hbm,
            "network_efficiency": e_network,
        },
        copy=False,
    )
    tail: dict[str, object] = {}  # added in one step: linear in the number of columns
    if "count" in frame.columns:  # given by the file: the ops each row stands for
        tail["count"] = frame["count"].to_numpy(dtype=np.int64)
    for d in sorted(c for c in frame.columns if is_dim(c)):
        tail[d] = int_or_na(frame[d].to_numpy(dtype=float))
    measured = frame["measured_seconds"].to_numpy(dtype=float)
    tail["measured_seconds"] = measured
    tail["measured_over_predicted"] = measured / t_lower
    tail["notes"] = frame["notes"]
    for col in frame.columns:
        if col not in INTERNAL and col not in result.columns and col not in tail:
            tail[col] = frame[col]
    results = pd.concat([result, pd.DataFrame(tail, index=result.index, copy=False)], axis=1)
    sends = (network_bytes > 0) & (flops_pc > 0)  # an op with FLOPs and a collective
    op_kind = np.where(collective_row, 2, np.where(custom, 1, 0)).astype(np.int8)
    swept = swept_dims(frame)
    facts = pd.DataFrame(
        {
            "kind": pd.Categorical.from_codes(op_kind, categories=list(KINDS_OF_OP)),
            "in_sweep": swept.astype(bool).to_numpy(dtype=bool),  # a sweep's point, not a row
            "swept": swept,
            # which points of its sweep a row is (scenarios.marks.point_marks; every one for a
            # row given without the expansion)
            "marks": frame["marks"].to_numpy(dtype=np.int16)
            if "marks" in frame.columns
            else np.full(len(frame), 0x7F, dtype=np.int16),
            "in_step": frame["in_step"].to_numpy(dtype=bool)
            if "in_step" in frame.columns
            else np.zeros(len(frame), dtype=bool),
            "peak_flops_derated": rate,
            "hbm_bandwidth_derated": hbm_rate,
            "link_bandwidth_derated": link_rate,
            "network_intensity": np.where(sends, flops_pc / network_bytes, np.nan),
            "network_critical_intensity": np.where(sends, ridge_point(rate, link_rate), np.nan),
            "link_latency": latency,
            "latency_floor": np.where(phases > 0, phases * latency * chips / 2.0, np.nan),
            "latency_knee": latency_knee(chips, link_rate, topology, latency, phases, all_to_all),
        },
        index=result.index,
        copy=False,
    )
    return results, facts


EXACT = 2.0**53  # the largest whole number every count is exact to (docs/input.md)


def int_or_na(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Whole numbers as a nullable Int64 array; NaN, and anything past 2^53 (a critical batch
    no real batch reaches), become NA."""
    with np.errstate(invalid="ignore"):
        missing = np.isnan(values) | (values > EXACT)
    return pd.arrays.IntegerArray(np.where(missing, 0, values).astype(np.int64), missing)


def swept_dims(frame: pd.DataFrame) -> pd.Series:
    """The dims (and fleet axes) each row's series sweeps, as a tuple per row (('B', 'D'); ()
    for a single row): the fact renderers read, built once per distinct value of the
    expansion's label ("B,D") and shared by its rows (no Python per row)."""
    labels = frame["swept"] if "swept" in frame.columns else pd.Series("", index=frame.index)
    if not isinstance(labels.dtype, pd.CategoricalDtype):
        labels = labels.astype(str).astype("category")
    kinds = np.empty(len(labels.cat.categories) + 1, dtype=object)
    for k, label in enumerate([*labels.cat.categories, ""]):  # a few distinct labels
        kinds[k] = tuple(d for d in str(label).split(",") if d)
    return pd.Series(kinds[labels.cat.codes.to_numpy()], index=frame.index, dtype=object)


def critical_batch(
    *,
    batch: np.ndarray,
    flops: np.ndarray,
    batch_bytes: np.ndarray,
    fixed_bytes: np.ndarray,
    network_bytes: np.ndarray,
    chips: np.ndarray,
    peak: np.ndarray,
    hbm_bw: np.ndarray,
    link_bw: np.ndarray,
    topology: np.ndarray,
    latency: np.ndarray,
    phases: np.ndarray,
) -> np.ndarray:
    """Smallest per-chip batch (product of batch dims) at which a row is compute-bound; NaN: never.

    Per chip, FLOPs, the batch-carrying bytes (X and the output) and the collective volume are
    linear in the batch p, the other operand is fixed (book Q2-Q4, exact byte counts):
      t_math > t_hbm      <=>  p (f/P - h/BW) > y/BW
      t_math > t_network  <=>  f/P > phases*c*v  and  p f/P > phases * latency floor
    The closed form is then checked against the model at p and p-1 to absorb rounding.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = flops / batch
        h1 = batch_bytes / batch
        v1 = network_bytes / batch
        slope = f1 / peak - h1 / hbm_bw
        threshold = np.where(slope > 0, (fixed_bytes / hbm_bw) / slope, np.inf)
        ring = topology if topology.dtype == bool else topology == "ring"
        net_per_byte = phases * np.where(
            ring, 1.0 / (2.0 * link_bw), (chips - 1) / (chips * link_bw)
        )
        net_ok = (phases == 0) | (f1 / peak > net_per_byte * v1)
        floor = phases * latency * chips / 2.0
        threshold = np.maximum(threshold, np.where(phases > 0, floor * peak / f1, 0.0))
        threshold = np.where(net_ok & np.isfinite(batch), threshold, np.inf)
        guess = np.where(np.isfinite(threshold), np.maximum(np.floor(threshold) + 1, 1), np.nan)

    def is_compute(p: np.ndarray, at: np.ndarray) -> np.ndarray:
        t_math = f1[at] * p / peak[at]
        t_hbm = (h1[at] * p + fixed_bytes[at]) / hbm_bw[at]
        t_net = collective_time(
            v1[at] * p, chips[at], link_bw[at], topology[at], latency[at], phases[at]
        )
        return (t_math > t_hbm) & (t_math > t_net)

    out = np.full(len(guess), np.nan)
    at = np.flatnonzero(np.isfinite(guess))  # only rows with a critical batch are checked
    p = guess[at]
    with np.errstate(invalid="ignore"):
        for _ in range(2):  # rounding can misplace the closed form by one step either way
            up = ~is_compute(p, at)
            p = np.where(up, p + 1, p)
            down = (p > 1) & is_compute(p - 1, at)
            p = np.where(down, p - 1, p)
            out[at] = p
            moved = up | down  # a row left in place stays in place: only moved rows again
            at, p = at[moved], p[moved]
    return out
