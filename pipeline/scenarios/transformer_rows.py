"""The checks of `transformer` rows (docs/input.md#transformer-steps): their shape from `model`
(the model catalog, docs/model.md#the-model-catalog) and/or the row's own dims D, F, N, K, H,
L, V (a value in the row wins), `kv_dtype` (the KV cache's, default the activations'), and
tensor parallelism (`shard` = N) or expert parallelism (`shard` = E, an MoE model) when
`chips` > 1. Each distinct model is looked up once; the shape is filled per column with numpy."""

from __future__ import annotations

import numpy as np

from pipeline.catalogs.llms import ModelCatalog, load_models
from pipeline.errors import quoted
from pipeline.model.dtypes import canonical_dtype, known_dtype_names
from pipeline.model.transformer import SHAPE
from pipeline.scenarios.coded import Col
from pipeline.scenarios.dims import Sweeps
from pipeline.scenarios.problems import Found, flag, flag_per_value

FILLED = (*SHAPE, "E")  # dims a model fills where the row leaves them blank
WHAT = {"D": "the model width", "F": "the MLP width", "N": "query heads", "K": "KV heads",
        "H": "the head dim", "L": "layers", "V": "the vocabulary"}  # fmt: skip


def check_steps(
    step: np.ndarray,
    model: Col,
    cells: dict[str, Col],
    values: dict[str, np.ndarray],
    kv: Col,
    activations: np.ndarray,
    shard: Col,
    chips: np.ndarray,
    models: ModelCatalog | None = None,
    sweeps: dict[str, Sweeps] | None = None,
) -> tuple[dict[str, object], Found]:
    """The columns steps add (`model`, `kv_dtype`, `moe_k`, `moe_width`) and their shape dims
    filled into `values` (in place, a dim column added where the file has none), and the
    problems: an unknown model, a shape neither the row nor its model gives, a bad kv_dtype,
    a shard other than N (or E, of an MoE model) on more than one chip, more new tokens T
    than positions S at any point of the row's sweeps (`sweeps`, scenarios.dims')."""
    n = len(step)
    found: Found = []
    named = step & ~model.is_("")
    catalog = load_models() if named.any() and models is None else models
    canonical = model.derive(lambda t: catalog.resolve(t) if t and catalog else None)
    found += flag_per_value(
        named & canonical.is_(None),
        "model",
        model,
        unknown_model(catalog),
    )
    table = catalog.models if catalog is not None else None
    blank = {d: cells[d].is_("") if d in cells else np.ones(n, dtype=bool) for d in FILLED}
    for d in FILLED:
        column = values.setdefault(d, np.full(n, np.nan))
        of_model = _lookup(table, canonical, d)
        fill = step & blank[d] & ~np.isnan(of_model)
        column[fill] = of_model[fill]
    moe_k = np.where(step, _lookup(table, canonical, "k"), np.nan)
    moe_width = np.where(step, _lookup(table, canonical, "F_expert"), np.nan)
    moe = step & ~np.isnan(values["E"])
    shared = np.where(step, _lookup(table, canonical, "shared"), np.nan) > 0
    found += flag(moe & (np.isnan(moe_k) | np.isnan(moe_width)), "E",
                  "an MoE step (E experts) takes its active experts k and expert width from its "
                  "model: give `model` (a catalog model, or one of --models)")  # fmt: skip
    routed = moe & ~np.isnan(moe_k) & ~np.isnan(moe_width)  # else said above, under E
    found += flag(
        routed & ~blank["F"],
        "F",
        "F (the MLP width) is not used by an MoE step (E experts): its experts' width is its "
        "model's F_expert; leave F blank",
    )
    found += flag(step & shared, "model", "its shared experts are not modelled yet: a model "
                  "of routed experts only (shared blank or 0)")  # fmt: skip
    unknown = named & canonical.is_(None)  # said once, as an unknown model
    for d in ("D", "N", "K", "H", "L", "V", "F"):
        need = (step & ~moe if d == "F" else step) & ~unknown
        found += flag(
            need & np.isnan(values[d]) & blank[d],
            d,
            f"a transformer step needs dim {d} ({WHAT[d]}): give `model` (see `pipeline "
            f"models`) or the row's own {d}",
        )
    found += _tokens_past_positions(step, values, sweeps or {})
    kv_name = kv.derive(lambda t: canonical_dtype(t) if t else "")
    found += flag_per_value(
        step & kv_name.is_(None),
        "kv_dtype",
        kv,
        lambda t: f"unknown dtype {quoted(t)} (one of {', '.join(known_dtype_names())})",
    )
    kv_dtype = np.where(kv_name.is_("") | kv_name.is_(None), activations, kv_name.values())
    split = step & (chips > 1)
    letter = shard.values()
    good = np.where(moe, np.isin(letter, ["N", "E"]), letter == "N")
    found += flag(
        split & ~good,
        "shard",
        lambda p: f"{quoted(letter[p]) if letter[p] else 'no shard'} on {int(chips[p])} chips: "
        + ("a transformer step splits its heads (shard = N, tensor parallelism)"
           + (" or its experts (shard = E, expert parallelism)" if moe[p] else "")),
    )  # fmt: skip
    return {
        "model": np.where(step, canonical.values(), "").astype(object),
        "kv_dtype": kv_dtype.astype(object),
        "moe_k": moe_k,
        "moe_width": moe_width,
    }, found


def unknown_model(catalog: ModelCatalog):
    """What a model cell the catalog does not know gets: its name and a did-you-mean, else
    where the list is (a step's `model`, a serve row's `draft_model`)."""

    def reason(t: str) -> str:
        hint = catalog.suggest(t)
        tail = f" (did you mean '{hint}'?)" if hint else "; see `pipeline models`"
        return f"unknown model {quoted(t)}{tail}"

    return reason


def _tokens_past_positions(step: np.ndarray, values: dict, sweeps: dict[str, Sweeps]) -> Found:
    """A problem per step with T > S at some point (its largest T against its smallest S):
    the T new tokens are among the S positions they attend to (prefill T = S, decode T = 1)."""
    if "T" not in values or "S" not in values:
        return []
    t, s = values["T"].copy(), values["S"].copy()
    swept = {}
    for d, ends, pick in (("T", t, max), ("S", s, min)):
        rows, cells = sweeps.get(d, (np.zeros(0, dtype=np.int64), []))
        ends[rows] = [pick(c.items) if c.items else (c.largest if pick is max else c.lo)
                      for c in cells]  # fmt: skip
        swept[d] = np.isin(np.arange(len(step)), rows)

    def reason(p: int) -> str:
        tokens = ("up to " if swept["T"][p] else "") + f"{t[p]:.0f}"
        positions = ("from " if swept["S"][p] else "") + f"{s[p]:.0f}"
        return (
            f"T = {tokens} new tokens but S = {positions} positions: S counts the step's new "
            "tokens too, so T is at most S (prefill: T = S, the prompt; decode: T = 1)"
        )

    with np.errstate(invalid="ignore"):
        return flag(step & (t > s), "T", reason)


def _lookup(table, names: Col, column: str) -> np.ndarray:
    """Each row's model's value of `column` (NaN for no model or a blank value): looked up
    once per distinct model."""
    if table is None or column not in table.columns:
        return np.full(len(names.codes), np.nan)
    by_name = table[column].astype(float)
    return names.derive(lambda m: by_name.get(m, np.nan) if m else np.nan, dtype=float).values()
