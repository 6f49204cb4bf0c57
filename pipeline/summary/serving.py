"""The serving answer (docs/outputs.md#the-serving-answer, issue 43): for every serve series (a
source row of op `serve`: docs/input.md#serving), per configuration (model, chip, precision,
KV cache dtype, chip count: a fleet point) its best point, the most tokens/s per chip among
its points that meet the latency targets and fit in HBM, and the configurations ranked by it
per model (a token of one model is not a token of another); a configuration meeting at no
point is listed after them at its point nearest to meeting, with `miss` saying why (ttft,
tpot, memory). With prices (issue 44), the cheapest per million tokens and the most tokens
per joule among those meeting are ranked too.

As every statistic (summary.partial): `serving_rows` reduces one frame of results to its serve
rows' columns (one row per serve point); `merge_serving` concatenates them in file order;
`serving_answer` ranks them, the same for every engine."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.dtypes import DTYPE_COLUMNS
from pipeline.summary.codes import fits
from pipeline.summary.training import rows_of
from pipeline.words import dtype_labels

SERVE = "serve"  # a serve row's op (model.ops)
POINT = ["model", "hardware", "dtype", "kv_dtype", "chips"]  # a configuration
FLOATS = [
    "ttft", "tpot", "request_latency", "tokens_per_second_per_chip",
    "tokens_per_second_per_user", "ttft_target", "tpot_target",
]  # fmt: skip
COSTS = ["usd_per_million_tokens", "tokens_per_joule"]  # with prices (issue 44), when present
ROW_COLUMNS = [
    "series", *POINT, "B", "isl", "osl", *FLOATS, "meets_target", "miss", "time_basis",
    "fits", "missed", "excess",
]  # fmt: skip
SERVING_COLUMNS = [
    "series", "rank", "config", *POINT, "B", "isl", "osl", *FLOATS, "meets_target", "miss",
    "time_basis",
]  # fmt: skip
RANKS = ["cost_rank", "energy_rank"]  # after COSTS, when the run has them
# the results' columns serving_rows reads
READ = frozenset({*FLOATS, *COSTS, *DTYPE_COLUMNS, "series", "model", "hardware", "kv_dtype",
                  "chips", "B", "isl", "osl", "meets_target", "miss", "time_basis", "fits",
                  "memory_footprint", "hbm_capacity"})  # fmt: skip
CURVE_COLUMNS = [
    "series", "config", "B", "tokens_per_second_per_chip", "tokens_per_second_per_user",
    "ttft", "tpot", "meets_target", "fits",
]  # fmt: skip


def serving_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The serve rows of one frame of results (ROW_COLUMNS, and COSTS present, in file order):
    their configuration, their serving figures, and how near a point is to meeting its
    targets: `missed` (how many of TTFT, TPOT and memory it misses) and `excess` (the largest
    of ttft / ttft_target, tpot / tpot_target and footprint / HBM capacity)."""
    if "ttft" not in results.columns or "op" not in results.columns:
        return _empty(ROW_COLUMNS)
    serve = rows_of(results["op"], SERVE)
    if not serve.any():
        return _empty(ROW_COLUMNS)
    rows = results[[c for c in results.columns if c in READ]][serve]  # only what it reads
    n = len(rows)
    number = {c: _floats(rows, c) for c in FLOATS}
    fit = fits(rows)
    over = [
        number["ttft"] / number["ttft_target"],
        number["tpot"] / number["tpot_target"],
        _floats(rows, "memory_footprint") / _floats(rows, "hbm_capacity"),
    ]
    with np.errstate(invalid="ignore"):
        missed = (over[0] > 1).astype(np.int64) + (over[1] > 1) + ~fit
        excess = np.fmax(np.fmax(over[0], over[1]), over[2])
    kv = _text(rows, "kv_dtype")  # blank: the KV cache in the activations' dtype
    kv = np.where(kv == "", _text(rows, "x_dtype"), kv)
    table = pd.DataFrame(
        {
            "series": _text(rows, "series"),
            "model": _text(rows, "model"),
            "hardware": _text(rows, "hardware"),
            "dtype": dtype_labels(*(rows[c] for c in DTYPE_COLUMNS)),
            "kv_dtype": kv,
            "chips": rows["chips"].to_numpy(dtype=np.int64),
            **{c: _whole(rows, c) for c in ("B", "isl", "osl")},
            **number,
            "meets_target": rows["meets_target"].astype("boolean").to_numpy()
            if "meets_target" in rows.columns
            else pd.array([pd.NA] * n, dtype="boolean"),
            "miss": _text(rows, "miss"),
            "time_basis": _text(rows, "time_basis"),
            "fits": fit,
            "missed": missed.astype(np.int64),
            "excess": excess,
            **{c: _floats(rows, c) for c in COSTS if c in rows.columns},
        }
    )
    return table


def merge_serving(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """serving_rows of consecutive frames (in file order) as those of all their rows."""
    tables = [t for t in tables if len(t)]
    if len(tables) <= 1:
        return tables[0] if tables else _empty(ROW_COLUMNS)
    return pd.concat(tables, ignore_index=True)


def serving_answer(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary.serving (SERVING_COLUMNS, then COSTS and RANKS the rows have: per series in file
    order, per model, its configurations meeting the targets by rank, then the others nearest
    first) and Summary.serving_curves (CURVE_COLUMNS, and usd_per_million_tokens when present:
    every serve point with its configuration, in file order) of merged serving_rows."""
    costs = [c for c in COSTS if c in rows.columns]
    curve_columns = CURVE_COLUMNS + costs[:1]
    if rows.empty:
        ranks = [RANKS[COSTS.index(c)] for c in costs]
        return _empty(SERVING_COLUMNS + costs + ranks), _empty(curve_columns)
    rows = rows.reset_index(drop=True)
    group, _ = _codes(rows, ["series", "model"])
    config, first = _codes(rows, ["series", *POINT])
    rows["config"] = _labels(rows, config, first)
    ok = rows["fits"].to_numpy(dtype=bool) & rows["meets_target"].fillna(True).to_numpy(bool)
    speed = rows["tokens_per_second_per_chip"].to_numpy(dtype=float)
    missed = np.where(ok, 0, rows["missed"].to_numpy(dtype=np.int64))
    excess = np.where(ok, 0.0, rows["excess"].to_numpy(dtype=float))
    # per configuration: meeting before missing; the fastest meeting, else the fewest misses,
    # then the smallest excess, then the fastest; ties in file order
    order = np.lexsort((np.arange(len(rows)), -speed, excess, missed, ~ok, config))
    best = order[np.r_[True, np.diff(config[order]) != 0]]
    lines = rows.iloc[best].reset_index(drop=True)
    meeting, at = ok[best], group[best]
    lines["rank"] = _ranked(np.where(meeting, -speed[best], np.nan), at)
    for cost, rank in zip(COSTS, RANKS, strict=True):
        if cost in costs:  # the cheapest per million tokens, the most tokens per joule
            sign = 1.0 if cost == "usd_per_million_tokens" else -1.0
            value = sign * lines[cost].to_numpy(dtype=float)
            lines[rank] = _ranked(np.where(meeting, value, np.nan), at)
    rank = lines["rank"].to_numpy(dtype=float, na_value=np.inf)
    near = np.lexsort((
        np.arange(len(lines)), -speed[best], excess[best], missed[best], rank, ~meeting, at
    ))  # fmt: skip
    ranks = [RANKS[COSTS.index(c)] for c in costs]
    serving = lines.iloc[near][SERVING_COLUMNS + costs + ranks].reset_index(drop=True)
    return serving, rows[curve_columns].copy()


def _ranked(value: np.ndarray, group: np.ndarray) -> pd.Series:
    """Per group, the rank of each value, smallest first, equal values sharing the lower rank
    (1, 1, 3); NA where the value is NaN."""
    ranks = pd.Series(value).groupby(group).rank(method="min")
    return ranks.astype("Int64")


def _codes(rows: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's code of its values in `columns`, numbered in order of first appearance, and
    the first row of each code (the columns' codes combined as one whole number, renumbered
    densely at each step: no tuple per row)."""
    key = np.zeros(len(rows), dtype=np.int64)
    for c in columns:
        codes, uniques = pd.factorize(rows[c])
        key = pd.factorize(key * (len(uniques) + 1) + codes)[0].astype(np.int64)
    _, first = np.unique(key, return_index=True)
    return key, first


def _labels(rows: pd.DataFrame, config: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Each row's configuration (codes `config`, each first at row `first`) in words: 'b200
    fp8 ×4', with its KV cache dtype where it is not its activations' ('h100 bf16, KV fp8
    ×8'), its model first where its series has several ('llama3-70b b200 fp8 ×4'). Built per
    distinct configuration."""
    several = rows.groupby("series", sort=False)["model"].transform("nunique").to_numpy() > 1
    columns = ["model", "hardware", "dtype", "kv_dtype", "chips"]
    labels = []
    for model, hardware, dtype, kv, chips, named in zip(
        *(rows[c].to_numpy()[first] for c in columns), several[first], strict=True
    ):  # one per configuration
        text = f"{hardware} {dtype}"
        if kv and kv != dtype:
            text += f", KV {kv}"
        text += f" \u00d7{chips}"
        labels.append(f"{model} {text}" if named else text)
    return np.asarray(labels, dtype=object)[config]


def _text(rows: pd.DataFrame, column: str) -> np.ndarray:
    """A text column's values ('' where it is missing, or the frame has no such column)."""
    if column not in rows.columns:
        return np.full(len(rows), "", dtype=object)
    values = rows[column]  # each distinct value worded once (a categorical's by its codes)
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes, uniques = values.cat.codes.to_numpy(), values.cat.categories
    else:
        codes, uniques = pd.factorize(values)  # missing: -1, the '' after the words
    return np.asarray([*(str(u) for u in uniques), ""], dtype=object)[codes]


def _floats(rows: pd.DataFrame, column: str) -> np.ndarray:
    if column not in rows.columns:
        return np.full(len(rows), np.nan)
    return rows[column].to_numpy(dtype=float, na_value=np.nan)


def _whole(rows: pd.DataFrame, column: str) -> pd.array:
    if column not in rows.columns:
        return pd.array([pd.NA] * len(rows), dtype="Int64")
    return pd.array(rows[column].to_numpy(dtype=float, na_value=np.nan), dtype="Int64")


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
