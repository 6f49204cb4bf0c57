"""The training answer in words (docs/outputs.md#training, issue 45): one sentence per train
series ("llama3-70b on 15.0T tokens: h100 bf16 ×4096 fsdp=4096, 40.3 days at 45.0% MFU,
compute-bound") for the Answer sheet, the report's first screen, the notebook and the lines
`pipeline run` prints; and the Training table's records (SI numbers beside their words) for
the report, the workbook's Training sheet and the notebook. Read from Summary.training,
never from the rows."""

from __future__ import annotations

import pandas as pd

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.text.answer import bound_label
from pipeline.render.text.fleet import listed

TRAINING_SENTENCES = 20  # sentences said (one per train series); all in summary.json
TRAINING_SERIES = 20  # train series a report or notebook shows (the rest: summary.json)
TRAINING_ROWS = 40  # configurations a series' table shows (the rest counted)
STRATEGY = {"dp": "DP", "fsdp": "FSDP", "tp": "TP", "pp": "PP", "ep": "EP"}


def training_sentences(training: pd.DataFrame, limit: int = TRAINING_SENTENCES) -> list[str]:
    """The first `limit` train series' answers (in Summary.training's order), a sentence each."""
    if training is None or training.empty:
        return []
    first = _first_series(training, limit)
    groups = first.groupby(first["series"].astype(str), sort=False).indices
    return [sentence(first.iloc[at]) for at in groups.values()]


def _first_series(training: pd.DataFrame, limit: int) -> pd.DataFrame:
    """The lines of Summary.training's first `limit` series (a file of a million single-row
    series says only the first: no group per series built past them)."""
    series = training["series"]  # text already: no string made per row
    return training[series.isin(pd.unique(series)[:limit])]


def sentence(lines: pd.DataFrame) -> str:
    """One train series' answer (its Summary.training lines, in order): the model and its
    tokens, the fastest configuration that fits, its days (or step time) at its MFU and what
    bounds it; those tied with it; how many fit; the tokens a chip it lacks to be
    compute-bound; the cheapest; or, with none fitting, the nearest and what it needs."""
    first = lines.iloc[0]
    model = str(first["model"]) or str(first["series"])
    if fmt.missing(first["train_tokens"]):
        head = _("{model}, {tokens} tokens a step", model=model,
                 tokens=fmt.parameters(first["tokens"]))  # fmt: skip
    else:
        head = _("{model} on {tokens} tokens", model=model,
                 tokens=fmt.parameters(first["train_tokens"]))  # fmt: skip
    if str(first["series"]) != model:  # the series' name says which of the model's runs
        head += f" ({first['series']})"
    ranked = lines[lines["rank"].notna()]
    if ranked.empty:
        return head + ": " + _(
            "no configuration fits in HBM; the nearest, {config}, needs {need} a chip of {has}",
            config=first["config"],
            need=fmt.size(first["memory_footprint"]),
            has=fmt.size(first["hbm_capacity"]),
        ) + "."  # fmt: skip
    best = ranked.iloc[0]
    config = str(best["config"])
    if lines["tokens"].nunique() > 1:
        config += ", " + _("{tokens} tokens a step", tokens=fmt.parameters(best["tokens"]))
    values = {"config": config, "mfu": fmt.percent(best["mfu"]), "bound": bound_text(best)}
    if fmt.missing(best["days"]):
        text = _("{config}, {time} a step at {mfu} MFU, {bound}", time=fmt.seconds(
            best["step_time"]), **values)  # fmt: skip
    else:
        text = _("{config}, {days} days at {mfu} MFU, {bound}", days=days(best["days"]),
                 **values)  # fmt: skip
    text = head + ": " + text
    if best["time_basis"] == "estimate":
        text += " " + _("(calibrated estimates)")
    tied = ranked[ranked["rank"] == best["rank"]].iloc[1:]
    if len(tied):
        text += " " + _("(tied with {configs})", configs=listed(tied["config"].tolist()))
    if not fmt.missing(best["compute_bound_batch"]) and not bool(best["compute_bound_batch"]):
        text += "; " + _(
            "compute-bound from {need} tokens a chip, it has {has}",
            need=fmt.count(best["critical_tokens_per_chip"]),
            has=fmt.count(best["tokens"] / best["chips"]),
        )
    if len(ranked) < len(lines):
        n = {"fitting": fmt.count(len(ranked)), "n": fmt.count(len(lines))}
        text += "; " + (_("{fitting} of {n} configurations fits in HBM", **n) if len(ranked) == 1
                        else _("{fitting} of {n} configurations fit in HBM", **n))  # fmt: skip
    return text + _cheapest(ranked, best) + "."


def days(value) -> str:
    """Days with three significant digits ('40.3', '161', '1,390')."""
    return fmt.number(value)


def bound_text(line) -> str:
    """'compute-bound', or 'network-bound (FSDP AllGather)': the strategy whose communication
    takes the longest and its collective."""
    said = bound_label(str(line["bound"]))
    if str(line["bound"]) == "network" and line["comm_strategy"]:
        said += " (" + strategy_text(line) + ")"
    return said


def strategy_text(line) -> str:
    """'FSDP AllGather': the dominant strategy and its collective ('' without communication)."""
    if not line["comm_strategy"]:
        return ""
    collective = {"all_gather": "AllGather", "reduce_scatter": "ReduceScatter",
                  "all_reduce": "AllReduce", "all_to_all": "AllToAll"}  # fmt: skip
    name = STRATEGY.get(str(line["comm_strategy"]), str(line["comm_strategy"]))
    return (name + " " + collective.get(str(line["collective"]), "")).strip()


def _cheapest(ranked: pd.DataFrame, best) -> str:
    """'; cheapest: tpu-v5p bf16 ×4096 fsdp=4096, $1.23M' (or 'also the cheapest'), priced."""
    if "cost_rank" not in ranked.columns:
        return ""
    first = ranked[ranked["cost_rank"] == 1]
    if first.empty:
        return ""
    first = first.iloc[0]
    price = usd(first["train_cost"])
    if first["config"] == best["config"]:
        return "; " + _("also the cheapest, {price}", price=price)
    return "; " + _("cheapest: {config}, {price}", config=first["config"], price=price)


def usd(value) -> str:
    """A training run's dollars: '$1.23M', '$456K', '$12.3'."""
    if fmt.missing(value):
        return fmt.DASH
    return "$" + fmt.parameters(value)


def fit_verdict(line) -> str:
    """'yes', or 'no: 165 GB a chip, HBM 80.0 GB'."""
    if bool(line["fits"]):
        return _("yes")
    return _("no: {need} a chip, HBM {has}", need=fmt.size(line["memory_footprint"]),
             has=fmt.size(line["hbm_capacity"]))  # fmt: skip


def training_tables(
    training: pd.DataFrame, limit: int = TRAINING_SERIES, rows: int = TRAINING_ROWS
) -> dict:
    """The first `limit` train series of Summary.training, each with its first `rows` lines
    (in the summary's order: those fitting by days, then the others), its model and tokens;
    whether dollars are shown (`cost`); how many series are left out."""
    if training is None or training.empty:
        return {"series": [], "total": 0, "more": 0, "cost": False}
    cost = "train_cost" in training.columns and bool(training["train_cost"].notna().any())
    total = int(training["series"].nunique())
    shown = _first_series(training, limit)
    by_series = shown.groupby(shown["series"].astype(str), sort=False).indices
    series = []
    for name, at in by_series.items():
        part = shown.iloc[at]
        first = part.iloc[0]
        lines = [_row(r, cost) for r in part.head(rows).to_dict("records")]
        about = [str(first["model"])] if first["model"] else []
        if not fmt.missing(first["train_tokens"]):
            about.append(_("{tokens} tokens", tokens=fmt.parameters(first["train_tokens"])))
        if part["tokens"].nunique() == 1:
            about.append(_("{tokens} tokens a step", tokens=fmt.parameters(first["tokens"])))
        series.append(
            {
                "series": name,
                "about": ", ".join(about),
                "rows": lines,
                "fitting": sum(r["rank"] is not None for r in lines),
                "more": len(part) - len(lines),
                "estimated": any(r["time_basis"] == "estimate" for r in lines),
            }
        )
    return {"series": series, "total": total, "more": total - len(series), "cost": cost}


def _row(r: dict, cost: bool) -> dict:
    """One configuration's line: its numbers (SI) and their words."""
    bound = r["compute_bound_batch"]
    compute_bound = None if fmt.missing(bound) else bool(bound)
    per_chip = r["tokens"] / r["chips"] if r["chips"] else None
    row = {
        "rank": _whole(r["rank"]),
        "config": str(r["config"]),
        **{k: str(r[k]) for k in ("name", "model", "hardware", "dtype", "parallel", "bound")},
        "chips": _whole(r["chips"]),
        "tokens": _number(r["tokens"]),
        "train_tokens": _number(r["train_tokens"]),
        "days": _number(r["days"]),
        "step_time": _number(r["step_time"]),
        "mfu": _number(r["mfu"]),
        "critical": _number(r["critical_tokens_per_chip"]),
        "tokens_per_chip": _number(per_chip),
        "compute_bound": compute_bound,
        "memory": _number(r["memory_footprint"]),
        "hbm": _number(r["hbm_capacity"]),
        "fits": bool(r["fits"]),
        "time_basis": str(r["time_basis"]),
        "strategy": strategy_text(r),
        "days_text": days(r["days"]),
        "step_text": fmt.seconds(r["step_time"]),
        "mfu_text": fmt.percent(r["mfu"]),
        "bound_text": bound_text(r),
        "critical_text": fmt.count(r["critical_tokens_per_chip"]),
        "per_chip_text": fmt.count(per_chip),
        "memory_text": fmt.size(r["memory_footprint"]),
        "fit_text": fit_verdict(r),
        "compute_bound_text": fmt.DASH if compute_bound is None
        else _("yes") if compute_bound else _("no"),
    }  # fmt: skip
    if cost:
        row["train_cost"] = _number(r.get("train_cost"))
        row["cost_text"] = usd(r.get("train_cost"))
        row["cost_rank"] = _whole(r.get("cost_rank"))
    return row


def _number(value) -> float | None:
    return None if fmt.missing(value) else float(value)


def _whole(value) -> int | None:
    return None if fmt.missing(value) else int(value)
