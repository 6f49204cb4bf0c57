"""Checks of the multi-chip columns: chips, shard (a dim of the op) and link (one the chip
has), and the link's bandwidth, topology and hop latency for each row."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pipeline.errors import quoted
from pipeline.model.catalog import LINKS, did_you_mean
from pipeline.model.ops import DIM
from pipeline.scenarios.coded import combine
from pipeline.scenarios.sweeps import whole_number_reason

if TYPE_CHECKING:
    from pipeline.scenarios.checks import Checker


def check_shard_and_link(ck: Checker, out: dict) -> None:
    """shard, link and their per-row link numbers (out gains link_bandwidth/topology/latency)."""
    shard_col = ck.col("shard")
    shard = shard_col.derive(str.upper)
    chips = out["chips"].values()
    op_dims = ck.sig.derive(lambda s: s.dims if s and s.has_einsum else None)
    dims_of = op_dims.values()
    has_shard = ~shard.is_("")
    splittable = ~op_dims.is_(None)
    in_op = combine(
        lambda s, d: bool(s) and d is not None and len(s) == 1 and s in d,
        shard,
        op_dims,
        dtype=bool,
    ).values()
    ck.add(
        has_shard & splittable & ~in_op,
        "shard",
        lambda p: (
            f"{quoted(shard_col.at(p))} is not a dim of op "
            f"{out['op'].at(p)} (its dims: {', '.join(dims_of[p])})"
        ),
    )
    ck.add(
        (chips > 1) & ~has_shard & splittable,
        "shard",
        lambda p: (
            f"chips = {int(chips[p])} needs a shard dim to split (one of {', '.join(dims_of[p])})"
        ),
    )
    out["shard"] = combine(lambda s, c: s if c > 1 else "", shard, out["chips"])
    _check_collective(ck, out, has_shard)

    link = ck.col("link").derive(str.lower)
    hw = out["hardware"]
    table = ck.catalog.chips
    chosen = combine(lambda lk, c: lk or table["default_link"].get(c, ""), link, hw)
    ck.add_per_value(  # one did-you-mean per distinct link, not per row
        ~link.is_("") & ~np.isin(link.values(), LINKS),
        "link",
        link,
        lambda v: (
            f"unknown link {quoted(v)}"
            + (
                f" (did you mean '{h}'?)"
                if (h := did_you_mean(v, list(LINKS)))
                else f"; use one of {', '.join(LINKS)}"
            )
        ),
    )

    def link_fields(chip: str, lk: str) -> tuple:
        if chip not in table.index or lk not in LINKS:
            return (np.nan, "ring" if lk == "ici" else "switch", np.nan)
        row = table.loc[chip]
        topology = row[f"{lk}_topology"] or ("ring" if lk == "ici" else "switch")
        return (row[f"{lk}_bandwidth"], topology, row[f"{lk}_latency"])

    fields = combine(link_fields, hw, chosen)
    bw = fields.per_row(np.array([f[0] for f in fields.uniques], dtype=float))
    lat = fields.per_row(np.array([f[2] for f in fields.uniques], dtype=float))
    override = out["link_bandwidth"]
    bw = np.where(np.isnan(override), bw, override)
    needs_link = (chips > 1) & ~hw.is_("") & np.isin(chosen.values(), LINKS)
    ck.add(
        needs_link & np.isnan(bw),
        "link",
        lambda p: (
            f"chip {hw.at(p)} has no bandwidth for link '{chosen.at(p)}'"
            f" (it has {', '.join(ck.catalog.links_of(hw.at(p))) or 'none'});"
            " pick one of those or give link_bandwidth"
        ),
    )
    # a chip without a default link (a --hardware chip may have none) times no communication
    reduces = combine(
        lambda s, sig: bool(s) and sig is not None and s in sig.contracted,
        shard,
        ck.sig,
        dtype=bool,
    ).values()
    ck.add(
        (ck.collective | (reduces & (chips > 1))) & ~hw.is_("") & chosen.is_("") & np.isnan(bw),
        "link",
        lambda p: (
            f"chip {hw.at(p)} has no default link; give link (it has {', '.join(has)})"
            if (has := ck.catalog.links_of(hw.at(p)))
            else f"chip {hw.at(p)} has no link; give link_bandwidth (bytes/s, one way)"
        ),
    )
    out["link"] = chosen
    out["link_bandwidth"] = bw
    out["link_topology"] = fields.derive(lambda f: f[1])
    out["link_latency"] = np.where(np.isnan(lat), 0.0, lat)


def _check_collective(ck: Checker, out: dict, has_shard: np.ndarray) -> None:
    """A collective row (docs/input.md#collectives): 2 or more chips, no shard, no flops, no
    dims."""
    collective = ck.collective
    chips = out["chips"].values()
    op = out["op"]
    # a chips cell that is not a whole number is reported as such, not as 1 chip too few
    raw = ck.col("chips")
    whole = raw.per_row(np.array([whole_number_reason(u) is None for u in raw.uniques], bool))
    ck.add(
        collective & whole & (chips < 2),
        "chips",
        lambda p: (
            f"op {op.at(p)} runs over 2 or more chips; give chips = N >= 2, the chips the "
            "array of `bytes` is spread over "
            + ("(got none: chips is blank)" if raw.at(p) == "" else f"(got {int(chips[p])})")
        ),
    )
    for d in (c for c in ck.table.column_names if DIM.match(c)):
        ck.add(
            collective & ~ck.col(d).is_(""),
            d,
            lambda p, d=d: (
                f"op {op.at(p)} is a collective: it takes bytes, not dims; leave {d} empty "
                "(bytes is V, the whole array)"
            ),
        )
    ck.add(
        collective & has_shard,
        "shard",
        lambda p: (
            f"op {op.at(p)} has no shard dim: `bytes` is the whole array, spread over all "
            "chips; leave shard blank"
        ),
    )
    ck.add(
        collective & ~ck.col("flops").is_(""),
        "flops",
        lambda p: f"op {op.at(p)} does no FLOPs (it is timed by the link alone); leave flops blank",
    )
