"""Op `transformer` (docs/model.md#transformer-steps, DESIGN §12): one step of a decoder-only
model over B sequences, T new tokens each, attending to S positions, as the ops it runs: one
row per op (`name/q_proj` ... `name/lm_head`, `count` = its layers, the LM head 1), each a
plain einsum, custom or collective row the roofline times as any other, after a total row
named `name` that model.step_totals fills with their sums.

The expansion is a frame operation: per op template (a dozen), the step rows' columns are set
at once; no Python per row. A step's rows stay together (it is one scenario of the plan), so
each Dask partition holds whole steps and computes their totals itself."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.dtypes import dtype_bytes
from pipeline.model.groups import BLOCK, IN_STEP, STEP_OF
from pipeline.model.ops import TRANSFORMER

# the shape columns a step needs (the row's own, else its model's: scenarios.transformer_rows)
SHAPE = ("D", "F", "N", "K", "H", "L", "V")
STEP_DIMS = ("B", "T", "S")
PART, AT = "_step_part", "_step_at"  # sort keys of the expansion (dropped after)
# internal: a custom op row's total FLOPs (one op, all chips; its `flops` is one chip's)
OP_FLOPS = "op_total_flops"


def _einsum(name, einsum, shard=None, count="L"):
    return {"name": name, "kind": "einsum", "einsum": einsum, "shard": shard, "count": count}


def _custom(name, count="L"):
    return {"name": name, "kind": "custom", "count": count}


# the ops of one layer (count L) and the LM head (count 1); `shard`: the dim tensor
# parallelism (shard = N, c chips) splits: heads, KV heads when there are c of them or more,
# the MLP width; o_proj and mlp_down contract a split dim, so the model adds their AllReduce
DENSE = (
    _einsum("q_proj", "BTD,DNH->BTNH", "N"),
    _einsum("k_proj", "BTD,DKH->BTKH", "K"),
    _einsum("v_proj", "BTD,DKH->BTKH", "K"),
    _custom("attention"),
    _einsum("o_proj", "BTNH,NHD->BTD", "N"),
    _custom("norms"),
    _custom("residual"),
    _einsum("mlp_gate", "BTD,DF->BTF", "F"),
    _einsum("mlp_up", "BTD,DF->BTF", "F"),
    _custom("mlp_act"),
    _einsum("mlp_down", "BTF,FD->BTD", "F"),
    _einsum("lm_head", "BTD,DV->BTV", "V", count=1),
)
# an MoE layer in place of the MLP: the router, the k of E experts each token goes to (the
# weights of every expert some token uses read once), and with expert parallelism (shard =
# E) the two AllToAlls that send tokens to their experts' chips and back
MOE = (
    _einsum("router", "BTD,DE->BTE", None),
    _custom("experts_gate_up"),
    _custom("experts_act"),
    _custom("experts_down"),
    {"name": "dispatch", "kind": "all_to_all", "count": "L"},
    {"name": "combine", "kind": "all_to_all", "count": "L"},
)
MLP_OPS = ("mlp_gate", "mlp_up", "mlp_act", "mlp_down")


def is_step(frame: pd.DataFrame) -> np.ndarray:
    """Which rows are transformer steps (of a categorical op column, none is looked at when
    no category is one: every run asks, on its hot path)."""
    op = frame["op"]
    if isinstance(op.dtype, pd.CategoricalDtype) and TRANSFORMER not in op.cat.categories:
        return np.zeros(len(frame), dtype=bool)
    return (op == TRANSFORMER).to_numpy(dtype=bool)


def expand_steps(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with each transformer step followed by its ops' rows (the step row kept first,
    as the total model.step_totals fills); other rows as they are, in order."""
    steps = is_step(frame)
    if not steps.any():
        return frame
    frame = frame.reset_index(drop=True)
    step = frame[steps]
    moe = step["E"].notna().to_numpy() if "E" in step.columns else np.zeros(len(step), bool)
    # positions in the frame before any expansion, and the totals rows are summed into, kept
    # from model.groups' expansion where it made them
    at = np.arange(len(frame))
    base = frame[STEP_OF].to_numpy() if STEP_OF in frame.columns else at
    block = frame[BLOCK].to_numpy() if BLOCK in frame.columns else np.full(len(frame), -1)
    within = frame[IN_STEP].to_numpy(dtype=bool) if IN_STEP in frame.columns else steps
    parts = [
        frame.assign(**{STEP_OF: base, BLOCK: np.where(steps, base, block), PART: 0,
                        AT: at, IN_STEP: within | steps})
    ]  # fmt: skip
    for k, template in enumerate((*DENSE[:-1], *MOE, DENSE[-1])):  # the LM head last
        mine = ~moe if template["name"] in MLP_OPS else np.ones(len(step), bool)
        if template in MOE:
            mine = moe.copy()
            if template["kind"] == "all_to_all":
                mine &= _split(step, "E")
        if mine.any():
            rows = step[mine]
            ops = _op_rows(rows, template)
            mine_at = base[rows.index]
            parts.append(ops.assign(**{STEP_OF: mine_at, BLOCK: mine_at, PART: k + 1,
                                       AT: rows.index, IN_STEP: True}))  # fmt: skip
    out = pd.concat(parts, ignore_index=True)
    order = np.lexsort((out[PART].to_numpy(), out[AT].to_numpy()))
    out = out.iloc[order].drop(columns=[PART, AT]).reset_index(drop=True)
    if "count" in out.columns:
        out["count"] = out["count"].fillna(1.0)
    return out


def _split(step: pd.DataFrame, dim: str) -> np.ndarray:
    """Which steps split `dim` over their chips."""
    return ((step["shard"].astype(str) == dim) & (step["chips"] > 1)).to_numpy(dtype=bool)


def _op_rows(step: pd.DataFrame, template: dict) -> pd.DataFrame:
    """The rows of one op of every step in `step`."""
    f = {c: step[c].to_numpy(dtype=float) for c in (*STEP_DIMS, *SHAPE) if c in step.columns}
    chips = step["chips"].to_numpy(dtype=float)
    act, kv = _bytes(step, "x_dtype"), _bytes(step, "kv_dtype")
    rows = step.copy()
    rows["name"] = step["name"].astype(str) + "/" + template["name"]
    rows["series"] = step["series"].astype(str) + "/" + template["name"]
    # a step with `count` = n is n steps one after another: each op n times as often
    steps = step["count"].to_numpy(dtype=float) if "count" in step.columns else np.ones(len(step))
    steps = np.where(np.isnan(steps), 1.0, steps)
    rows["count"] = (f["L"] if template["count"] == "L" else 1.0) * steps
    if "measured_seconds" in rows.columns:  # the step's measured time is its total's alone
        rows["measured_seconds"] = np.nan
    tp, ep = _split(step, "N"), _split(step, "E")
    if template["kind"] == "einsum":
        rows["op"] = rows["einsum"] = template["einsum"]
        dim = template["shard"] or ""
        split = tp & (dim != "")  # KV heads too: fewer than chips, a chip computes one
        # expert parallelism: the rest of the layer is data parallel, the batch split
        rows["shard"] = np.where(split, dim, np.where(ep, "B", ""))
        rows["chips"] = np.where(split | ep, chips, 1.0)
        if template["name"] in ("k_proj", "v_proj"):  # written to the KV cache
            rows["out_dtype"] = step["kv_dtype"]
        if template["name"] == "router":
            rows["F"] = np.nan
        return rows
    heads = np.where(tp, chips, 1.0)  # tensor parallelism: the heads and F on each chip
    kv_heads = np.where(tp, np.minimum(chips, f["K"]), 1.0)  # a KV head shared past K chips
    b, t, s, d = f["B"], f["T"], f["S"], f["D"]
    # expert parallelism: the rest of the layer batch-split as the einsum rows are (shard B),
    # its busiest chip holding ceil(B / chips) of the B sequences
    mine = np.where(ep, np.ceil(b / chips), b)
    name = template["name"]
    if template["kind"] == "all_to_all":  # a token's D values to its k experts' chips
        rows["op"], rows["einsum"], rows["shard"] = "all_to_all", "", ""
        rows["bytes"] = b * t * step["moe_k"].to_numpy(dtype=float) * d * act
        return rows
    if name == "attention":  # fused: the scores never reach HBM (FlashAttention)
        n, k_, h = f["N"] / heads, f["K"] / kv_heads, f["H"]
        flops, total = 4 * mine * t * s * n * h, 4 * b * t * s * f["N"] * h
        moved = 2 * mine * t * n * h * act + 2 * mine * s * k_ * h * kv
    elif name == "norms":  # two RMSNorms a layer: read and write B·T·D, weights D (each chip)
        flops, total = 2 * 4 * mine * t * d, 2 * 4 * b * t * d
        moved = 2 * (2 * mine * t * d * act + d * _bytes(step, "y_dtype"))
    elif name == "residual":  # two adds a layer: two B·T·D in, one out
        flops, total, moved = 2 * mine * t * d, 2 * b * t * d, 2 * 3 * mine * t * d * act
    elif name == "mlp_act":  # SiLU(gate) x up: two B·T·F in, one out
        width = f["F"] / np.where(tp, chips, 1.0)
        flops, total, moved = 5 * mine * t * width, 5 * b * t * f["F"], 3 * mine * t * width * act
    else:
        flops, total, moved = _experts(step, f, name, act)
    # `chips`: how many chips share the op's work (the norms and the residual adds of a
    # tensor-parallel step run whole on every chip: 1); `flops` one chip's (the busiest's),
    # which the times come from, and OP_FLOPS the op's total, which model.step_totals puts
    # in the results' `flops` as an einsum row's is (docs/outputs.md)
    split = tp if name not in ("norms", "residual") else np.zeros(len(step), bool)
    rows["op"], rows["einsum"], rows["shard"] = "custom", "", ""
    rows["chips"] = np.where(split | ep, chips, 1.0)
    rows["flops"], rows["bytes"], rows[OP_FLOPS] = flops, moved, total
    return rows


def _experts(step: pd.DataFrame, f: dict, name: str, act: np.ndarray):
    """FLOPs and bytes of the routed experts on the busiest chip, and the op's total FLOPs:
    B·T tokens to k of E experts each; the weights of the experts some token uses (expected
    E·(1 - (1 - k/E)^(B·T))) read once. With expert parallelism (shard = E) a chip holds
    E / chips of the experts and the token-expert pairs are spread evenly (the best case),
    the busiest chip holding ceil(B·T·k / chips) of them and ceil(used / chips) of the used
    experts; with tensor parallelism (shard = N) each chip 1 / chips of every expert's width."""
    tokens = f["B"] * f["T"]
    experts = step["E"].to_numpy(dtype=float)
    k = step["moe_k"].to_numpy(dtype=float)
    full = step["moe_width"].to_numpy(dtype=float)
    chips = step["chips"].to_numpy(dtype=float)
    ep = _split(step, "E")
    width = full / np.where(_split(step, "N"), chips, 1.0)
    used = experts * -np.expm1(tokens * np.log1p(-k / experts))
    pairs = tokens * k  # token-expert pairs
    # rounded first: an expected count a hair over a whole number is that number
    used_here = np.where(ep, np.ceil(np.round(used / chips, 9)), used)
    routed = np.where(ep, np.ceil(pairs / chips), pairs)  # token-expert pairs on the chip
    weight = _bytes(step, "y_dtype")
    d = f["D"]
    if name == "experts_gate_up":
        flops, total = 2 * routed * d * 2 * width, 2 * pairs * d * 2 * full
        moved = used_here * 2 * d * width * weight + routed * (d + 2 * width) * act
    elif name == "experts_act":
        flops, total, moved = 5 * routed * width, 5 * pairs * full, 3 * routed * width * act
    else:
        flops, total = 2 * routed * width * d, 2 * pairs * full * d
        moved = used_here * width * d * weight + routed * (width + d) * act
    return flops, total, moved


def _bytes(step: pd.DataFrame, column: str) -> np.ndarray:
    """Bytes per element of a dtype column (each distinct name looked up once)."""
    codes, names = pd.factorize(step[column].astype(str))
    return np.asarray([dtype_bytes(n) for n in names], dtype=float)[codes]
