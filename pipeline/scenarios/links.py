"""Checks of the multi-chip columns: shard (a dim of the op), link (one the chip has) and a
collective's chips, and the link's bandwidth, topology and hop latency for each row."""

from __future__ import annotations

import numpy as np

from pipeline.catalogs.hardware import LINKS, Catalog, did_you_mean
from pipeline.errors import quoted
from pipeline.scenarios.coded import Col, combine
from pipeline.scenarios.problems import Found, flag, flag_per_value
from pipeline.scenarios.sweeps import whole_number_reason


def check_shard(shard_col: Col, sig: Col, op: Col, chips: Col) -> tuple[Col, np.ndarray, Found]:
    """The shard dim per row (upper case; blank on one chip), which rows name one, and the
    problems: a shard that is not a dim of the op, or chips > 1 with nothing to split."""
    shard = shard_col.derive(str.upper)
    n_chips = chips.values()
    op_dims = sig.derive(lambda s: s.dims if s and s.has_einsum else None)
    dims_of = op_dims.values()
    has_shard = ~shard.is_("")
    splittable = ~op_dims.is_(None)
    in_op = combine(
        lambda s, d: bool(s) and d is not None and len(s) == 1 and s in d,
        shard,
        op_dims,
        dtype=bool,
    ).values()
    found = flag(
        has_shard & splittable & ~in_op,
        "shard",
        lambda p: (
            f"{quoted(shard_col.at(p))} is not a dim of op "
            f"{op.at(p)} (its dims: {', '.join(dims_of[p])})"
        ),
    )
    found += flag(
        (n_chips > 1) & ~has_shard & splittable,
        "shard",
        lambda p: (
            f"chips = {int(n_chips[p])} needs a shard dim to split (one of {', '.join(dims_of[p])})"
        ),
    )
    return combine(lambda s, c: s if c > 1 else "", shard, chips), has_shard, found


def check_link(
    link_col: Col,
    hw: Col,
    chips: np.ndarray,
    sig: Col,
    shard: Col,
    collective: np.ndarray,
    bandwidth: np.ndarray,
    catalog: Catalog,
) -> tuple[dict[str, object], Found]:
    """link (given, else the chip's default) and its bandwidth (the row's own `bandwidth`,
    else the catalog's), topology and hop latency per row, and the problems: an unknown
    link, or rows that communicate over a link the chip has no bandwidth for."""
    link = link_col.derive(str.lower)
    table = catalog.chips
    chosen = combine(lambda lk, c: lk or table["default_link"].get(c, ""), link, hw)
    found = flag_per_value(  # one did-you-mean per distinct link, not per row
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
    bw = np.where(np.isnan(bandwidth), bw, bandwidth)
    needs_link = (chips > 1) & ~hw.is_("") & np.isin(chosen.values(), LINKS)
    found += flag(
        needs_link & np.isnan(bw),
        "link",
        lambda p: (
            f"chip {hw.at(p)} has no bandwidth for link '{chosen.at(p)}'"
            f" (it has {', '.join(catalog.links_of(hw.at(p))) or 'none'});"
            " pick one of those or give link_bandwidth"
        ),
    )
    # a chip without a default link (a --hardware chip may have none) times no communication
    reduces = combine(
        lambda s, sg: bool(s) and sg is not None and s in sg.contracted,
        shard,
        sig,
        dtype=bool,
    ).values()
    found += flag(
        (collective | (reduces & (chips > 1))) & ~hw.is_("") & chosen.is_("") & np.isnan(bw),
        "link",
        lambda p: (
            f"chip {hw.at(p)} has no default link; give link (it has {', '.join(has)})"
            if (has := catalog.links_of(hw.at(p)))
            else f"chip {hw.at(p)} has no link; give link_bandwidth (bytes/s, one way)"
        ),
    )
    out = {
        "link": chosen,
        "link_bandwidth": bw,
        "link_topology": fields.derive(lambda f: f[1]),
        "link_latency": np.where(np.isnan(lat), 0.0, lat),
    }
    return out, found


def check_collective(
    collective: np.ndarray,
    op: Col,
    chips_col: Col,
    chips: np.ndarray,
    has_shard: np.ndarray,
    dim_cells: dict[str, Col],
    flops_col: Col,
) -> Found:
    """A collective row (docs/input.md#collectives): 2 or more chips, no shard, no flops, no
    dims (`dim_cells`: every dim column of the file)."""
    # a chips cell that is not a whole number is reported as such, not as 1 chip too few
    whole = chips_col.per_row(
        np.array([whole_number_reason(u) is None for u in chips_col.uniques], dtype=bool)
    )
    found = flag(
        collective & whole & (chips < 2),
        "chips",
        lambda p: (
            f"op {op.at(p)} runs over 2 or more chips; give chips = N >= 2, the chips the "
            "array of `bytes` is spread over "
            + ("(got none: chips is blank)" if chips_col.at(p) == "" else f"(got {int(chips[p])})")
        ),
    )
    for d, cells in dim_cells.items():
        found += flag(
            collective & ~cells.is_(""),
            d,
            lambda p, d=d: (
                f"op {op.at(p)} is a collective: it takes bytes, not dims; leave {d} empty "
                "(bytes is V, the whole array)"
            ),
        )
    found += flag(
        collective & has_shard,
        "shard",
        lambda p: (
            f"op {op.at(p)} has no shard dim: `bytes` is the whole array, spread over all "
            "chips; leave shard blank"
        ),
    )
    found += flag(
        collective & ~flops_col.is_(""),
        "flops",
        lambda p: f"op {op.at(p)} does no FLOPs (it is timed by the link alone); leave flops blank",
    )
    return found
