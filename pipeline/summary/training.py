"""The training answer (docs/outputs.md#training, issue 45 item 3): one line per train row (a
training step of op `train`: docs/input.md#training-steps), its configuration (model, chip,
precision, chip count, parallelism), its step time (the calibrated estimate where there is
one, else the floor t_lower: `time_basis`), days for its `train_tokens`, MFU at that time,
bound and the strategy whose communication dominates, the per-chip token batch for it to be
compute-bound and whether the row has it, memory per chip and whether it fits; ranked per
train series by days, the fastest first (by time a token where a row has no train_tokens),
the rows that do not fit after them with `miss` = 'memory'. With prices (issue 44), the
training run's cost (the step's cost x train_tokens / tokens) and its rank.

As every statistic (summary.partial): `training_rows` reduces one frame of results to its
train rows' columns (one row per train row); `merge_training` concatenates them in file
order; `training_answer` ranks them, the same for every engine."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from pipeline.model.dtypes import DTYPE_COLUMNS
from pipeline.summary.codes import column_codes, fits
from pipeline.words import dtype_labels

TRAIN = "train"  # a train row's op (model.ops)
SECONDS_A_DAY = 86400.0
TEXT = ["series", "name", "model", "hardware", "dtype", "parallel", "scheme", "time_basis",
        "bound", "collective", "comm_strategy"]  # fmt: skip
ROW_COLUMNS = [
    "series", "name", "model", "hardware", "dtype", "chips", "parallel", "scheme", "tokens",
    "train_tokens", "step_time", "time_basis", "t_lower", "days", "mfu", "bound", "collective",
    "comm_strategy", "critical_tokens_per_chip", "compute_bound_batch", "memory_footprint",
    "hbm_capacity", "fits",
]  # fmt: skip
TRAINING_COLUMNS = ["series", "rank", "config", *ROW_COLUMNS[1:], "miss"]
COSTS = ["usd_per_chip_hour", "train_cost"]  # with prices (issue 44), then COST_RANK
COST_RANK = "cost_rank"
SERIES_CODE = "series_code"  # training_rows' own: the partial's series codes, when given
ENERGY = "train_energy"  # J: the chips at TDP for every step (issue 44), when present
BASES = pd.Index(["floor", "estimate"], dtype=object)  # a time_basis's code: estimated or not


def training_rows(results: pd.DataFrame, series=None) -> pd.DataFrame:
    """The train rows of one frame of results (ROW_COLUMNS, then COSTS and ENERGY where the
    results have cost and energy, in file order): each one's step time, days and MFU at it.
    `series`: the frame's series as pd.factorize gave them (codes, names), when known: kept
    as SERIES_CODE (training_answer numbers the series from them, not from their texts)."""
    if "op" not in results.columns or "mfu" not in results.columns:
        return _empty(ROW_COLUMNS)
    train = rows_of(results["op"], TRAIN)
    if not train.any():
        return _empty(ROW_COLUMNS)
    rows = results if train.all() else results[train]  # a file of train rows: no copy
    floor = _floats(rows, "t_lower")
    estimate = _floats(rows, "t_estimate")
    estimated = ~np.isnan(estimate)
    time = np.where(estimated, estimate, floor)
    tokens, train_tokens = _floats(rows, "tokens"), _floats(rows, "train_tokens")
    steps = train_tokens / tokens  # the steps of the training run
    mfu = _floats(rows, "mfu")
    with np.errstate(divide="ignore", invalid="ignore"):
        mfu = np.where(estimated, mfu * floor / time, mfu)  # the same FLOPs at the step time
    parallel = _text(rows, "parallel")
    table = _frame(
        {
            "series": _text(rows, "series"),
            "name": _text(rows, "name"),
            "model": _text(rows, "model"),
            "hardware": _text(rows, "hardware"),
            "dtype": dtype_labels(*(rows[c] for c in DTYPE_COLUMNS)),
            "chips": rows["chips"].to_numpy(dtype=np.int64),
            "parallel": parallel,
            "scheme": _schemes_of(parallel),
            "tokens": tokens,
            "train_tokens": train_tokens,
            "step_time": time,
            "time_basis": pd.Categorical.from_codes(estimated.astype(np.int8), BASES),
            "t_lower": floor,
            "days": steps * time / SECONDS_A_DAY,
            "mfu": mfu,
            "bound": _text(rows, "bound"),
            "collective": _text(rows, "collective"),
            "comm_strategy": _text(rows, "comm_strategy"),
            "critical_tokens_per_chip": _floats(rows, "critical_tokens_per_chip"),
            "compute_bound_batch": rows["compute_bound_batch"].astype("boolean").to_numpy(),
            "memory_footprint": _floats(rows, "memory_footprint"),
            "hbm_capacity": _floats(rows, "hbm_capacity"),
            "fits": fits(rows),
        }
    )
    codes = None if series is None else np.asarray(series[0])
    codes = codes if codes is None or train.all() else codes[train]
    if codes is not None and (codes >= 0).all():  # NA (-1): numbered from the texts
        table[SERIES_CODE] = pd.Series(codes.astype(np.int64), index=table.index, copy=False)
    if "cost" in rows.columns:
        table["usd_per_chip_hour"] = _floats(rows, "usd_per_chip_hour")
        table["train_cost"] = _floats(rows, "cost") * steps
    if "energy" in rows.columns:
        table[ENERGY] = _floats(rows, "energy") * steps
    return table


def schemes(parallel: np.ndarray) -> np.ndarray:
    """Each parallelism without the degrees that grow with the chips ('fsdp=512 tp=8' ->
    'fsdp tp=8'): the line a configuration draws over chip counts. One per distinct text."""
    codes, uniques = pd.factorize(pd.Series(parallel, dtype=object))
    said = [
        " ".join(re.sub(r"^(fsdp|dp)=\d+$", r"\1", p) for p in re.split(r"[;\s]+", str(u)) if p)
        for u in uniques
    ]
    return np.asarray([*said, ""], dtype=object)[codes]


def _schemes_of(parallel):
    """schemes() of a column _text gave: worded once per category when it is categorical."""
    if not isinstance(parallel, pd.Categorical):
        return schemes(parallel)
    codes, uniques = pd.factorize(schemes(np.asarray(parallel.categories, dtype=object)))
    return pd.Categorical.from_codes(codes[parallel.codes], pd.Index(uniques, dtype=object))


def rows_of(op: pd.Series, name: str) -> np.ndarray:
    """Where the op column says `name` (a categorical's codes compared: no text per row)."""
    codes, names = column_codes(op)
    return codes == names.index(name) if name in names else np.zeros(len(op), dtype=bool)


def merge_training(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """training_rows of consecutive frames (in file order) as those of all their rows."""
    tables = [t for t in tables if len(t)]
    if len(tables) <= 1:
        return tables[0] if tables else _empty(ROW_COLUMNS)
    tables = [t.drop(columns=[SERIES_CODE], errors="ignore") for t in tables]  # each its own
    return pd.concat(tables, ignore_index=True)


def training_answer(rows: pd.DataFrame) -> pd.DataFrame:
    """Summary.training (TRAINING_COLUMNS, then COSTS and `cost_rank`, and ENERGY, where the
    rows have them) of merged training_rows: per train series in file order, the rows that
    fit by days (ties sharing a rank, in file order), then those that do not."""
    costs = [c for c in COSTS if c in rows.columns]
    extra = [*costs, *([COST_RANK] if costs else []), *([ENERGY] if ENERGY in rows.columns else [])]
    if rows.empty:
        return _empty(TRAINING_COLUMNS + extra)
    rows = rows.reset_index(drop=True)
    series, count = _series_numbers(rows)
    ok = rows["fits"].to_numpy(dtype=bool)
    days = rows["days"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_token = rows["step_time"].to_numpy(dtype=float) / rows["tokens"].to_numpy(float)
    first = np.nan_to_num(days, nan=np.inf)
    second = np.nan_to_num(per_token, nan=np.inf)
    if count == len(rows):  # a line per series (a nightly file): in file order already
        order, lines = np.arange(len(rows)), rows
    else:
        order = np.lexsort((second, first, ~ok, series))  # stable: ties stay in file order
        lines = rows.iloc[order].reset_index(drop=True)
    lines["rank"] = _ranks(series[order], ok[order], first[order], second[order])
    if costs:
        cost = np.where(ok[order], lines["train_cost"].to_numpy(dtype=float), np.nan)
        lines[COST_RANK] = _rank_min(cost, series[order])
    lines["config"] = configs(lines, series[order])
    lines["miss"] = np.array(["memory", ""], dtype=object)[ok[order].astype(np.intp)]
    return _plain(lines[TRAINING_COLUMNS + extra])


def _series_numbers(rows: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Each row's series numbered in order of first appearance, and how many: from
    SERIES_CODE when the rows have it (a line per series: already so), else the texts."""
    if SERIES_CODE not in rows.columns:
        series, names = pd.factorize(rows["series"])
        return series, len(names)
    codes = rows[SERIES_CODE].to_numpy(dtype=np.int64)
    if (codes == np.arange(len(codes))).all():
        return codes, len(codes)
    series, names = pd.factorize(codes)
    return series, len(names)


def configs(lines: pd.DataFrame, series: np.ndarray) -> pd.Series:
    """Each line's configuration in words: 'h100 bf16 ×4096 fsdp=1024 tp=4', its model first
    where its series (codes `series`) trains several. Worded once per distinct one."""
    if series.max(initial=-1) + 1 == len(series):  # a line per series: one model each
        several = np.zeros(len(series), dtype=bool)
    else:
        model = pd.factorize(lines["model"])[0].astype(np.int64)
        pairs = pd.unique(series.astype(np.int64) * (model.max(initial=0) + 2) + model + 1)
        models = np.bincount(pairs // (model.max(initial=0) + 2),
                             minlength=series.max(initial=0) + 1)  # fmt: skip
        several = models[series] > 1
    key = several.astype(np.int64)
    radix = 2  # the count of keys so far: one mixed-radix number while it fits in 62 bits
    for c in ("model", "hardware", "dtype", "chips", "parallel"):
        codes, uniques = pd.factorize(lines[c])
        if radix * (len(uniques) + 1) >= 2**62:  # numbered densely again
            key, radix = pd.factorize(key)[0].astype(np.int64), key.max(initial=0) + 1
        key = key * (len(uniques) + 1) + codes
        radix *= len(uniques) + 1
    key = pd.factorize(key)[0].astype(np.int64)
    inverse = key  # numbered densely in order of first appearance
    first = np.zeros(key.max(initial=-1) + 1, dtype=np.int64)
    first[key[::-1]] = np.arange(len(key))[::-1]  # each configuration's first line
    said = []
    at_first = {c: lines[c].iloc[first].tolist() for c in ("model", "hardware", "dtype", "chips",
                                                           "parallel")}  # fmt: skip
    for i, at in enumerate(first):  # one per configuration
        r = {c: v[i] for c, v in at_first.items()}
        text = f"{r['hardware']} {r['dtype']} \u00d7{r['chips']} {r['parallel']}".strip()
        said.append(f"{r['model']} {text}" if several[at] else text)
    return pd.Series(np.asarray(said, dtype=object)[inverse], dtype=object)


def _ranks(series, ok, first, second) -> pd.array:
    """Ranks of lines already in order (per series, fitting first by `first` then `second`):
    1, 2, 2, 4 where two are equal on both; NA for the lines that do not fit."""
    n = len(series)
    new_series = np.r_[True, series[1:] != series[:-1]]
    starts = np.maximum.accumulate(np.where(new_series, np.arange(n), 0))
    position = np.arange(n) - starts + 1
    changed = new_series | np.r_[True, (first[1:] != first[:-1]) | (second[1:] != second[:-1])]
    last = np.maximum.accumulate(np.where(changed, np.arange(n), 0)) if n else position
    rank = position[last]  # the position of the first line it equals
    return pd.arrays.IntegerArray(rank.astype(np.int64), ~np.asarray(ok, dtype=bool))


def _rank_min(value: np.ndarray, group: np.ndarray) -> pd.Series:
    """Per group, the rank of each value, smallest first, equal values sharing the lower rank;
    NA where the value is NaN."""
    return pd.Series(value).groupby(group).rank(method="min").astype("Int64")


def _text(rows: pd.DataFrame, column: str):
    """A text column's values ('' where missing, or the frame has no such column); a
    categorical's as a categorical of its texts (training_answer gives them as text)."""
    if column not in rows.columns:
        return np.full(len(rows), "", dtype=object)
    values = rows[column]
    if isinstance(values.dtype, pd.StringDtype):  # text already (a name): as it is
        return values.fillna("").array
    if values.dtype == object:  # a name as Python strings: as they are
        array = values.to_numpy()
        return np.where(pd.isna(array), "", array)
    if isinstance(values.dtype, pd.CategoricalDtype):  # codes kept: no text per row
        codes = values.cat.codes.to_numpy()
        words = [str(u) for u in values.cat.categories]
        if (codes < 0).any():
            if "" not in words:
                words.append("")
            codes = np.where(codes < 0, words.index(""), codes)
        uniques, at = np.unique(np.asarray(words, dtype=object), return_inverse=True)
        if len(uniques) == len(words):  # distinct texts (two categories could word alike)
            return pd.Categorical.from_codes(codes, pd.Index(words, dtype=object))
        return pd.Categorical.from_codes(at[codes], pd.Index(uniques, dtype=object))
    codes, uniques = pd.factorize(values)  # each distinct value worded once; NA: -1
    return np.asarray([*(str(u) for u in uniques), ""], dtype=object)[codes]


def _plain(lines: pd.DataFrame) -> pd.DataFrame:
    """`lines` with each categorical column (training_rows' texts) as Python strings."""
    coded = [c for c in lines.columns if isinstance(lines[c].dtype, pd.CategoricalDtype)]
    if not coded:
        return lines
    lines = lines.copy(deep=False)
    for c in coded:
        cat = lines[c].array
        lines[c] = pd.Series(np.asarray(cat.categories, dtype=object)[cat.codes],
                             dtype=object, index=lines.index)  # fmt: skip
    return lines


def _frame(columns: dict) -> pd.DataFrame:
    """A frame of these columns, text kept as Python strings (object: no conversion to
    pandas' string dtype, a third of the time of a million train rows; nor stacked into
    blocks of a dtype, a copy of each column)."""
    return pd.DataFrame({
        k: pd.Series(v, dtype=object, copy=False)
        if isinstance(v, np.ndarray) and v.dtype == object else v
        for k, v in columns.items()
    }, copy=False)  # fmt: skip


def _floats(rows: pd.DataFrame, column: str) -> np.ndarray:
    if column not in rows.columns:
        return np.full(len(rows), np.nan)
    return rows[column].to_numpy(dtype=float, na_value=np.nan)


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
