"""Op `train` (docs/model.md#training, DESIGN §25): one training step of a decoder-only model
as one result row, in closed form over whole columns (no expansion into ops).

Book "How to Scale Your Model": the step does 6 x params x tokens FLOPs (x 8/6 with block
remat; active params for an MoE), a third in the forward pass and the rest backward; each
parallel strategy's collectives (model.train_comms) overlap the compute of their own pass,
and the strategies overlap each other ("we assume that we can fully overlap comms on the X
and Y axis"), so a pass takes the longest of its compute, its HBM reads and its slowest
strategy's communication; a pipeline's bubble stretches the step by (pp - 1) / microbatches.
mfu = 6 x params x tokens / (chips x peak x step time); days = train_tokens / tokens x step
time / 86400."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.collectives import KINDS
from pipeline.model.dtypes import dtype_bytes
from pipeline.model.ops import TRAIN
from pipeline.model.params import param_counts
from pipeline.model.roofline import BOUNDS, bound_codes
from pipeline.model.train_comms import (
    COLLECTIVE_OF,
    PASSES,
    STRATEGIES,
    compute_bound_tokens,
    mfu,
    step_comms,
)
from pipeline.model.train_memory import (
    REMAT,
    activation_bytes,
    chip_memory,
    flops_factor,
    optimizer_bytes,
)

# a train row's own result columns (NaN or blank on every other row; present only when the
# run has train rows), in this order at the end of the results
TRAIN_COLUMNS = (
    "tokens", "train_tokens", "parallel", "mesh_axes", "remat", "optimizer", "microbatches",
    "model_flops", "mfu", "days", "critical_tokens_per_chip", "compute_bound_batch",
    "comm_strategy", "bubble", "weights_per_chip", "gradients_per_chip", "optimizer_per_chip",
    "activations_per_chip",
)  # fmt: skip
# the checks' columns the model reads and the results do not keep (scenarios.train_rows)
DEGREES = tuple(f"degree_{s}" for s in STRATEGIES)
AXES = tuple(f"axes_{s}" for s in STRATEGIES)
TRAIN_INTERNAL = (*DEGREES, *AXES, "link_reach", "dcn_bandwidth", "dcn_topology", "dcn_latency")
SECONDS_A_DAY = 86400.0
READ = frozenset({"D", "F", "N", "K", "H", "L", "V", "E", "moe_k", "moe_width", "chips",
                  "tokens", "microbatches", "x_dtype", "y_dtype", "remat",
                  "optimizer", "peak_flops", "hbm_bandwidth", "hbm_capacity", "link_bandwidth",
                  "link_topology", "link_latency", *TRAIN_INTERNAL,
                  "compute_efficiency", "hbm_efficiency", "network_efficiency"})  # fmt: skip


def with_training(results: pd.DataFrame, facts: pd.DataFrame, frame: pd.DataFrame):
    """`results` and `facts` (row for row with `frame`) with each train row's step filled and
    TRAIN_COLUMNS last; unchanged when the run has no train row (`frame` has no degrees)."""
    if DEGREES[0] not in frame.columns:
        return results, facts
    out = results.drop(columns=[c for c in (*TRAIN_INTERNAL, *TRAIN_COLUMNS)
                                if c in results.columns])  # fmt: skip
    rows = np.flatnonzero((frame["op"] == TRAIN).to_numpy(dtype=bool))
    if len(rows):  # only the columns the step reads, only its rows, each distinct one once
        wanted = frame[[c for c in frame.columns if c in READ]]
        wanted = wanted if len(rows) == len(frame) else wanted.iloc[rows]
        first, inverse = distinct_rows(wanted)
        step = {k: np.asarray(v)[inverse] for k, v in train_step(wanted.iloc[first]).items()}
        given = {c: _col(frame, c)[rows] for c in ("train_tokens", "measured_seconds")}
        with np.errstate(divide="ignore", invalid="ignore"):
            step["days"] = given["train_tokens"] / step["tokens"] * step["t_lower"] / SECONDS_A_DAY
            step["measured_over_predicted"] = given["measured_seconds"] / step["t_lower"]
    n = len(frame)

    def spread(c: str, base: np.ndarray | None = None, fill=np.nan) -> np.ndarray:
        """Column c: the step's values on the train rows, `base` (else `fill`) elsewhere."""
        if len(rows) == n:
            return np.asarray(step[c])
        values = np.full(n, fill) if base is None else base.copy()
        if len(rows):
            values[rows] = step[c]
        return values

    if len(rows):  # the replaced columns put in one frame (not a copy each) and put back
        new = {}
        for c in ("flops", "flops_per_chip", "bytes_read", "bytes_written", "hbm_bytes",
                  "network_bytes", "intensity", "t_math", "t_hbm", "t_network", "t_lower",
                  "t_upper", "attainable_flops", "peak_fraction", "memory_footprint",
                  "measured_over_predicted"):  # fmt: skip
            if c in out.columns:
                new[c] = spread(c, out[c].to_numpy(dtype=float))
        for c, categories in (("bound", BOUNDS), ("collective", KINDS)):
            codes = spread(c, out[c].cat.codes.to_numpy()).astype(np.int8)
            new[c] = pd.Categorical.from_codes(codes, categories=list(categories))
        fits = spread("fits", out["fits"].to_numpy(dtype=float, na_value=np.nan))
        new["fits"] = pd.arrays.BooleanArray(fits == 1.0, np.isnan(fits))
        critical = out["critical_batch"].array.copy()
        critical[rows] = pd.NA
        new["critical_batch"] = critical
        replaced = pd.DataFrame(new, index=out.index, copy=False)
        out = pd.concat([out.drop(columns=list(new)), replaced], axis=1)[out.columns]
    tail = {}
    for c in TRAIN_COLUMNS:
        if c in frame.columns:  # the row's own: given by the file (a categorical's text)
            tail[c] = frame[c].array
        elif c == "comm_strategy":
            codes = spread(c, fill=len(STRATEGIES)) if len(rows) else np.full(n, len(STRATEGIES))
            tail[c] = pd.Categorical.from_codes(codes.astype(np.int8), [*STRATEGIES, ""])
        else:
            values = spread(c) if len(rows) else np.full(n, np.nan)
            if c == "compute_bound_batch":  # True, False or NA (a row that is not a train step)
                values = pd.arrays.BooleanArray(values == 1.0, np.isnan(values))
            tail[c] = values
    out = pd.concat([out, pd.DataFrame(tail, index=out.index, copy=False)], axis=1)
    return out, facts


def distinct_rows(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The position of each distinct row's first appearance and, per row, which distinct row
    it is: the columns' bits mixed into one 64-bit key per row (no Python per row), the
    grouping then checked column by column, exactly; a key two different rows share (about
    one run in 10^7 at a million distinct rows) falls back to numbering every column."""
    columns = [
        bits
        for c in frame.columns
        if (bits := _bits(frame[c])).min(initial=0) != bits.max(initial=0)
    ]  # a constant column tells no row apart
    key = np.zeros(len(frame), dtype=np.uint64)
    for bits in columns:  # splitmix64's finalizer over each column in turn
        key = key ^ bits
        key = (key ^ (key >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        key = (key ^ (key >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        key = key ^ (key >> np.uint64(31))
    first, inverse = _numbered(key)
    if all((bits[first][inverse] == bits).all() for bits in columns):
        return first, inverse
    key = np.zeros(len(frame), dtype=np.int64)  # exact: each column's codes in turn
    for bits in columns:
        codes, uniques = pd.factorize(bits)
        key = pd.factorize(key * (len(uniques) + 1) + codes)[0].astype(np.int64)
    return _numbered(key)


def _numbered(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct key's first position (in order of first appearance) and each row's
    number among them: hashed (pd.factorize), not sorted (np.unique)."""
    inverse = pd.factorize(key)[0]
    seen = np.maximum.accumulate(np.r_[-1, inverse[:-1]])  # the highest number before each
    return np.flatnonzero(inverse > seen), inverse  # a new number: a first appearance


def _bits(column: pd.Series) -> np.ndarray:
    """A column's values as 64-bit words, equal where the values are (a category's code; a
    number's float64 bits)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy().astype(np.uint64)
    if column.dtype == np.float64:
        values = column.to_numpy()
    else:
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    return values.view(np.uint64)  # two NaNs (or 0.0 and -0.0) of other bits: two groups


def _col(step: pd.DataFrame, name: str, default: float = np.nan) -> np.ndarray:
    if name not in step.columns:
        return np.full(len(step), default)
    return pd.to_numeric(step[name], errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _per_name(column: pd.Series, value) -> np.ndarray:
    """`value(name)` of each row's text (a categorical's categories looked up once each)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes, names = column.cat.codes.to_numpy(), column.cat.categories
    else:
        codes, names = pd.factorize(column.astype(str))
    return np.asarray([value(str(n)) for n in names], dtype=float)[codes]


def _remat_index(name: str) -> float:
    return REMAT.index(name) if name in REMAT else np.nan


def _bytes(step: pd.DataFrame, column: str) -> np.ndarray:
    return _per_name(step[column], dtype_bytes)


def train_step(step: pd.DataFrame) -> dict[str, np.ndarray]:
    """Every result of the train rows `step` (the checked frame's train rows), by column."""
    n = len(step)
    dims = {d: _col(step, d) for d in ("D", "F", "N", "K", "H", "L", "V", "E")}
    moe_k, moe_width = _col(step, "moe_k"), _col(step, "moe_width")
    moe = ~np.isnan(dims["E"])
    counted = param_counts(pd.DataFrame({**dims, "k": moe_k, "F_expert": moe_width}))
    params = counted["params"].to_numpy()
    active = counted["active_params"].to_numpy()
    experts = np.where(moe, dims["L"] * dims["E"] * 3 * dims["D"] * moe_width, 0.0)
    degrees = {s: _col(step, f"degree_{s}", 1.0) for s in STRATEGIES}
    axes = {s: np.nan_to_num(_col(step, f"axes_{s}", 1.0), nan=1.0) for s in STRATEGIES}
    chips = _col(step, "chips", 1.0)
    tokens = _col(step, "tokens")
    m = np.nan_to_num(_col(step, "microbatches", 1.0), nan=1.0)
    w, act = _bytes(step, "y_dtype"), _bytes(step, "x_dtype")
    remat = step["remat"]
    stage = degrees["tp"] * degrees["pp"]
    held = (params - experts + experts / degrees["ep"]) / stage  # a chip's tensor/stage shard
    e = {k: _col(step, f"{k}_efficiency", 1.0) for k in ("compute", "hbm", "network")}
    peak = _col(step, "peak_flops")
    rate = peak * e["compute"]
    hbm_rate = _col(step, "hbm_bandwidth") * e["hbm"]

    model_flops = 6.0 * active * tokens
    factor = _per_name(remat, flops_factor)
    flops = model_flops * factor
    per_chip = flops / chips
    math = {"forward": 2.0 * active / chips / rate}  # seconds per token of the step
    math["backward"] = (6.0 * factor - 2.0) * active / chips / rate
    link = {"bandwidth": _col(step, "link_bandwidth") * e["network"],
            "ring": _per_name(step["link_topology"], lambda t: t == "ring") == 1.0,
            "latency": np.nan_to_num(_col(step, "link_latency"))}  # fmt: skip
    dcn = {"bandwidth": _col(step, "dcn_bandwidth") * e["network"],
           "ring": _per_name(step["dcn_topology"], lambda t: t == "ring") == 1.0,
           "latency": np.nan_to_num(_col(step, "dcn_latency"))}  # fmt: skip
    moe_tokens = np.where(moe, np.nan_to_num(moe_k), 0.0)
    size = {"weights": w * held, "layers": dims["L"] / degrees["pp"], "tokens": tokens,
            "width": dims["D"], "act": act, "moe_k": moe_tokens, "microbatches": m}  # fmt: skip
    comms = step_comms(size, degrees, axes, link, dcn, _col(step, "link_reach"))
    # HBM: each chip reads its shard of the stage's weights once a microbatch forward, twice
    # backward (the gradients of the activations and of the weights)
    read = m * w * held
    t_math = t_hbm = t_network = t_lower = 0.0
    worst = np.zeros((len(STRATEGIES), n))
    for p, name in enumerate(PASSES):
        pass_math = math[name] * tokens
        pass_hbm = read * (1 + p) / hbm_rate
        timed = np.stack([comms[s][name][2] for s in STRATEGIES])
        worst += timed
        pass_net = timed.max(axis=0)
        t_math, t_hbm = t_math + pass_math, t_hbm + pass_hbm
        t_network = t_network + pass_net
        t_lower = t_lower + np.maximum(np.maximum(pass_math, pass_hbm), pass_net)
    bubble = (degrees["pp"] - 1.0) / m
    t_lower = t_lower * (1.0 + bubble)
    need = compute_bound_tokens(comms, math)
    critical = np.where(np.isfinite(need), need / chips, np.nan)
    top = worst.argmax(axis=0)
    talks = worst.max(axis=0) > 0
    strategy = np.where(talks, top, len(STRATEGIES)).astype(np.int8)  # "": no communication
    kind = np.array([KINDS.index(COLLECTIVE_OF[s]) for s in STRATEGIES], dtype=np.int8)[top]
    state = _per_name(step["optimizer"], optimizer_bytes)
    held_here = held / degrees["fsdp"]  # FSDP (ZeRO-3) shards weights, gradients and state
    acts = activation_bytes(_per_name(remat, _remat_index), tokens, dims["L"], dims["D"],
                            np.where(moe, moe_tokens * moe_width, dims["F"]), act)  # fmt: skip
    memory = chip_memory(held_here, w, state, acts, chips)
    footprint = sum(memory.values())
    capacity = _col(step, "hbm_capacity")
    hbm_bytes = 3.0 * read
    network_bytes = size["weights"] * 3.0 * (degrees["fsdp"] > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "flops": flops,
            "flops_per_chip": per_chip,
            "bytes_read": hbm_bytes,
            "bytes_written": np.zeros(n),
            "hbm_bytes": hbm_bytes,
            "network_bytes": network_bytes,
            "intensity": per_chip / hbm_bytes,
            "t_math": t_math,
            "t_hbm": t_hbm,
            "t_network": t_network,
            "t_lower": t_lower,
            "t_upper": (t_math + t_hbm + t_network) * (1.0 + bubble),
            "attainable_flops": per_chip / t_lower,
            "peak_fraction": per_chip / t_lower / peak,
            "memory_footprint": footprint,
            "tokens": tokens,
            "bound": bound_codes(t_math, t_hbm, t_network),
            "collective": np.where(talks, kind, 0).astype(np.int8),
            "fits": np.where(np.isnan(capacity), np.nan, footprint <= capacity),
            "model_flops": model_flops,
            "mfu": mfu(model_flops, chips, peak, t_lower),
            "critical_tokens_per_chip": critical,
            "compute_bound_batch": np.where(
                np.isnan(tokens), np.nan, (tokens / chips > np.nan_to_num(critical, nan=np.inf))
            ).astype(float),
            "comm_strategy": strategy,
            "bubble": bubble,
            **memory,
        }
