"""The checks of `train` rows (docs/input.md#training-steps): the model's shape as a
transformer step's (scenarios.transformer_rows), `tokens` a step, `train_tokens`, `parallel`
(degrees of dp, fsdp, tp, pp and ep whose product is `chips`; blank: FSDP over every chip),
`mesh_axes` (the torus axes each strategy's collectives use), `remat`, `optimizer` and
`microbatches`, and from the catalog the reach of the row's link and the chip's data-center
network, which the model (model.train) needs. Every distinct cell is parsed once."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from pipeline.catalogs.hardware import did_you_mean
from pipeline.errors import quoted
from pipeline.model.ops import TRAIN
from pipeline.model.train_comms import STRATEGIES
from pipeline.model.train_memory import DEFAULT_OPTIMIZER, DEFAULT_REMAT, OPTIMIZERS, REMAT
from pipeline.scenarios.coded import Col, combine
from pipeline.scenarios.problems import flag, flag_per_value
from pipeline.scenarios.sweeps import parse_whole
from pipeline.scenarios.transformer_rows import check_steps

_ITEM = re.compile(r"^([A-Za-z]+)\s*=\s*(\S+)$")
EXAMPLE = "fsdp=1024 tp=4"


def dims_read(step: np.ndarray, op: Col) -> np.ndarray | None:
    """The rows whose dims are read where given (transformer steps and train rows), None
    when there are none."""
    rows = step | op.is_(TRAIN)
    return rows if rows.any() else None


def parse_degrees(text: str, what: str = "parallel") -> dict[str, int] | str:
    """`fsdp=1024 tp=4` (space, `;` or `,` between) as {strategy: degree}, or the reason it
    is not one."""
    items = [t for t in re.split(r"[\s;,]+", text.strip()) if t]
    out: dict[str, int] = {}
    for item in items:
        m = _ITEM.match(item)
        if m is None:
            return f"{quoted(item)} is not strategy=degree (e.g. {EXAMPLE})"
        name, value = m.group(1).lower(), m.group(2)
        if name not in STRATEGIES:
            hint = did_you_mean(name, list(STRATEGIES))
            return f"unknown strategy {quoted(name)}" + (
                f" (did you mean '{hint}'?)" if hint else f"; use {', '.join(STRATEGIES)}"
            )
        if name in out:
            return f"{name} is given twice in {quoted(text)}"
        try:
            out[name] = parse_whole(value)
        except ValueError:
            return f"{name}={quoted(value)}: a degree is a whole number of chips (1 or more)"
    if not out:
        return f"no strategy in {quoted(text)} (e.g. {EXAMPLE})"
    return out


def _choice(col: Col, names, default: str):
    """A text cell among `names` (case, `_` and spaces aside), its default when blank."""
    squashed = {re.sub(r"[-_\s]", "", n): n for n in names}
    return col.derive(lambda t: default if not t else squashed.get(re.sub(r"[-_\s]", "",
                                                                          t.lower())))  # fmt: skip


def train_rows(checker, op: Col, steps: dict, cells, values, dtypes, hw: Col, chips: Col,
               link: dict) -> dict:  # fmt: skip
    """`steps` (the checks' transformer columns) with the train rows' columns added, their
    shape dims filled into `values`; their problems go to `checker.found`. Unchanged when no
    row is a train step."""
    train = op.is_(TRAIN)
    if not train.any():
        return steps
    n = len(train)
    found = checker.found
    shape, bad = check_steps(train, checker.col("model"), cells, values, checker.col("kv_dtype"),
                             dtypes["x_dtype"].values(), checker.col("shard"), np.ones(n),
                             checker.models, {})  # fmt: skip
    found += bad
    out = dict(steps)
    for k, v in shape.items():
        out[k] = np.where(train, v, steps[k]) if k in steps else v
    found += flag(train & ~checker.col("shard").is_(""), "shard",
                  "a train row splits its chips by `parallel` (e.g. fsdp=1024 tp=4); leave "
                  "shard blank")  # fmt: skip
    tokens = checker.numbers("tokens", integer=True, what="a whole number of tokens a step")
    found += flag(
        train & np.isnan(tokens.values()) & checker.col("tokens").is_(""),
        "tokens",
        "a train row needs tokens, the global batch in tokens a step (e.g. 4e6)",
    )
    total = checker.numbers("train_tokens", what="a positive number of tokens (e.g. 15e12)")
    micro = checker.numbers("microbatches", integer=True, what="a whole number (1 or more)")
    n_chips = chips.values()
    degrees, canonical = _parallel(checker, train, n_chips, found)
    axes, axes_text = _axes(checker, train, found)
    pp = degrees["pp"]
    found += flag(
        train & (pp > 1) & checker.col("microbatches").is_(""),
        "microbatches",
        lambda p: (
            f"pp={int(pp[p])} needs microbatches, the pieces a step's batch is "
            "split into to fill the pipeline (its bubble: (pp - 1) / microbatches)"
        ),
    )
    remat = _choice(checker.col("remat"), REMAT, DEFAULT_REMAT)
    found += flag_per_value(
        train & remat.is_(None),
        "remat",
        checker.col("remat"),
        lambda t: f"unknown remat {quoted(t)}; use {', '.join(REMAT)}",
    )
    opt = _choice(checker.col("optimizer"), OPTIMIZERS, DEFAULT_OPTIMIZER)
    found += flag_per_value(train & opt.is_(None), "optimizer", checker.col("optimizer"),
                            lambda t: f"unknown optimizer {quoted(t)}; use "
                            f"{', '.join(OPTIMIZERS)}")  # fmt: skip
    out.update(
        tokens=np.where(train, tokens.values(), np.nan),
        train_tokens=np.where(train, total.values(), np.nan),
        parallel=_text(canonical, train),
        mesh_axes=_text(axes_text, train),
        remat=_text(remat, train),
        optimizer=_text(opt, train),
        microbatches=np.where(train, np.nan_to_num(micro.values(), nan=1.0), np.nan),
    )
    out.update({f"degree_{s}": np.where(train, degrees[s], np.nan) for s in STRATEGIES})
    out.update({f"axes_{s}": np.where(train, axes[s], np.nan) for s in STRATEGIES})
    network = _network(checker.catalog.chips, hw, link["link"], train)
    out.update(network)
    dense = np.isnan(values["E"]) if "E" in values else np.ones(n, dtype=bool)
    found += flag(train & (degrees["ep"] > 1) & dense, "parallel",
                  "ep (expert parallelism) splits an MoE model's experts: give an MoE model "
                  "(E experts), or use fsdp, tp, pp or dp")  # fmt: skip
    past = train & (n_chips > network["link_reach"]) & np.isnan(network["dcn_bandwidth"])
    found += flag(past, "chips",
                  lambda p: f"{n_chips[p]:.0f} chips are more than {link['link'].at(p)} reaches "
                  f"({network['link_reach'][p]:.0f}) and chip {hw.at(p)} has no dcn bandwidth "
                  "to join the rest; give a --hardware file with dcn_bandwidth, or fewer "
                  "chips")  # fmt: skip
    return out


def _parallel(checker, train, chips, found):
    """Each row's degrees (blank: fsdp over every chip) and their canonical text."""
    col = checker.col("parallel")
    parsed = col.derive(lambda t: parse_degrees(t) if t else {})
    bad = parsed.per_row(np.array([isinstance(v, str) for v in parsed.uniques], dtype=bool))
    found += flag_per_value(train & bad, "parallel", parsed, str)
    degrees = {s: np.ones(len(train)) for s in STRATEGIES}
    given = ~col.is_("") & ~bad
    for s in STRATEGIES:
        d = parsed.derive(lambda v, s=s: float(v.get(s, 1)) if isinstance(v, dict) else 1.0,
                          dtype=float).values()  # fmt: skip
        degrees[s] = np.where(given, d, 1.0)
    degrees["fsdp"] = np.where(given, degrees["fsdp"], chips)
    product = np.prod(np.stack([degrees[s] for s in STRATEGIES]), axis=0)
    found += flag(train & given & (product != chips), "parallel",
                  lambda p: f"{quoted(col.at(p))} multiplies to {product[p]:.0f} chips but chips "
                  f"= {chips[p]:.0f}; the degrees' product must be chips (e.g. fsdp="
                  f"{max(chips[p] // 4, 1):.0f} tp=4, or leave it blank for FSDP over every "
                  "chip)")  # fmt: skip
    text = combine(lambda v, c: " ".join(f"{s}={v.get(s, 1)}" for s in STRATEGIES
                                         if v.get(s, 1) > 1) if isinstance(v, dict) and v
                   else f"fsdp={int(c)}", parsed, chips_col(chips))  # fmt: skip
    return degrees, text


def _text(col: Col, train: np.ndarray) -> pd.Categorical:
    """A text Col as a Categorical, blank on the rows that are not train steps (built from
    its codes: no text per row)."""
    names = np.append(np.array(["" if u is None else str(u) for u in col.uniques], dtype=object),
                      "")  # fmt: skip
    categories, inverse = np.unique(names.astype(str), return_inverse=True)
    codes = np.where(train, inverse[:-1][col.codes], inverse[-1])
    return pd.Categorical.from_codes(codes, categories=categories)


def chips_col(chips: np.ndarray) -> Col:
    """Chips per row as a Col (a few distinct values)."""
    uniques, codes = np.unique(chips, return_inverse=True)
    return Col(codes.astype(np.intp), uniques.astype(object))


def _axes(checker, train, found):
    """Each row's torus axes per strategy (blank: 1 each) and the cell as written, canonical."""
    col = checker.col("mesh_axes")
    parsed = col.derive(lambda t: parse_degrees(t, "mesh_axes") if t else {})
    bad = parsed.per_row(np.array([isinstance(v, str) for v in parsed.uniques], dtype=bool))
    found += flag_per_value(
        train & bad,
        "mesh_axes",
        parsed,
        lambda r: r.replace(
            "a degree is a whole number of chips", "an axis count is a whole number"
        ),
    )
    axes = {}
    for s in STRATEGIES:
        axes[s] = parsed.derive(lambda v, s=s: float(v.get(s, 1)) if isinstance(v, dict)
                                else 1.0, dtype=float).values()  # fmt: skip
    text = parsed.derive(lambda v: " ".join(f"{s}={v[s]}" for s in STRATEGIES if s in v)
                         if isinstance(v, dict) else "")  # fmt: skip
    return axes, text


def _network(table, hw: Col, link: Col, train: np.ndarray) -> dict[str, np.ndarray]:
    """The reach of each row's link and its chip's dcn bandwidth, topology and latency (NaN
    or blank where the catalog has none)."""

    def fields(chip: str, lk: str) -> tuple:
        if chip not in table.index:
            return (np.nan, np.nan, "switch", np.nan)
        row = table.loc[chip]
        reach = row.get(f"{lk}_reach", np.nan) if lk else np.nan
        return (reach, row.get("dcn_bandwidth", np.nan), row.get("dcn_topology") or "switch",
                row.get("dcn_latency", np.nan))  # fmt: skip

    both = combine(fields, hw, link)
    reach, bw, _, latency = (both.per_row(np.array([f[k] for f in both.uniques], dtype=float))
                             if k != 2 else None for k in range(4))  # fmt: skip
    return {
        "link_reach": np.where(train, reach, np.nan),
        "dcn_bandwidth": np.where(train, bw, np.nan),
        "dcn_topology": _text(both.derive(lambda f: f[2]), train),
        "dcn_latency": np.where(train, latency, np.nan),
    }
