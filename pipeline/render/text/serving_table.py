"""The Serving table (docs/outputs.md#the-serving-table): per serve series, one line per
configuration (model, chip, dtypes, chip count) at its best batch, those meeting the targets
first by tokens/s per chip, then the misses and why (TTFT, TPOT, memory). Plain records (SI
numbers beside their words, worded by render.format) for the report, the workbook's Serving
sheet and the notebook; read from Summary.serving, never from the rows."""

from __future__ import annotations

import pandas as pd

from pipeline.i18n import _
from pipeline.render import format as fmt

SERVING_SERIES = 20  # serve series a report or notebook shows (the rest: summary.json)
SERVING_ROWS = 40  # configurations a series' table shows (the rest counted)
MISSES = ("ttft", "tpot", "memory")  # Summary.serving's `miss` codes, in their order
USD = "usd_per_million_tokens"  # issue 44's columns: with --prices
JOULES = "tokens_per_joule"  # with the chips' TDP


def has(serving: pd.DataFrame, column: str) -> bool:
    """Whether the serving answer carries a figure of issue 44 (USD or JOULES) on some line."""
    return column in serving.columns and bool(serving[column].notna().any())


def miss_words() -> dict[str, str]:
    """Each `miss` code as a table says it, in the current language."""
    return {
        "ttft": _("TTFT over target"),
        "tpot": _("TPOT over target"),
        "memory": _("does not fit in HBM"),
    }


def verdict(meets, miss: str) -> str:
    """The 'meets target / why not' cell: 'yes', 'no: TPOT over target, does not fit in HBM',
    or 'no target' for a point that fits with no target given."""
    codes = [c for c in MISSES if c in str(miss or "").split(", ")]
    if codes:
        words = miss_words()
        return _("no: {why}", why=", ".join(words[c] for c in codes))
    if fmt.missing(meets):
        return _("no target")
    return _("yes") if bool(meets) else _("no")


def usd(value) -> str:
    """Dollars with three significant digits: '$0.0858', '$1.23', '$12.3', '$1,234'."""
    if fmt.missing(value):
        return fmt.DASH
    return "$" + fmt.number(value)


def targets_text(ttft_target, tpot_target) -> str:
    """'TTFT ≤ 200 ms, TPOT ≤ 30.0 ms', either alone, or '' with none."""
    parts = []
    if not fmt.missing(ttft_target):
        parts.append(_("TTFT ≤ {t}", t=fmt.seconds(ttft_target)))
    if not fmt.missing(tpot_target):
        parts.append(_("TPOT ≤ {t}", t=fmt.seconds(tpot_target)))
    return ", ".join(parts)


def serving_tables(
    serving: pd.DataFrame, limit: int = SERVING_SERIES, rows: int = SERVING_ROWS
) -> dict:
    """The first `limit` serve series of Summary.serving, each with its first `rows` lines
    (in the summary's order: meeting lines by rank, then misses), its request shape and
    targets; whether dollars (`cost`) and tokens per joule (`energy`) are shown; how many
    series are left out."""
    if serving is None or serving.empty:
        return {"series": [], "total": 0, "more": 0, "cost": False, "energy": False}
    cost, energy = has(serving, USD), has(serving, JOULES)
    names = list(dict.fromkeys(serving["series"].astype(str)))
    by_series = serving.groupby(serving["series"].astype(str), sort=False).indices
    series = []
    for name in names[:limit]:
        part = serving.iloc[by_series[name]]
        first = part.iloc[0]
        lines = [_row(r, cost, energy) for r in part.head(rows).to_dict("records")]
        series.append(
            {
                "series": name,
                "isl": _whole(first["isl"]),
                "osl": _whole(first["osl"]),
                "request": _(
                    "{isl} in / {osl} out", isl=fmt.count(first["isl"]), osl=fmt.count(first["osl"])
                ),  # fmt: skip
                "targets": targets_text(first["ttft_target"], first["tpot_target"]),
                "ttft_target": _number(first["ttft_target"]),
                "tpot_target": _number(first["tpot_target"]),
                "rows": lines,
                "meeting": sum(r["rank"] is not None for r in lines),
                "more": len(part) - len(lines),
                "estimated": any(r["time_basis"] == "estimate" for r in lines),
            }
        )
    more = len(names) - len(series)
    return {"series": series, "total": len(names), "more": more, "cost": cost, "energy": energy}


def _row(r: dict, cost: bool, energy: bool) -> dict:
    """One configuration's line: its numbers (SI) and their words."""
    meets = None if fmt.missing(r["meets_target"]) else bool(r["meets_target"])
    miss = "" if fmt.missing(r["miss"]) else str(r["miss"])
    row = {
        "rank": _whole(r["rank"]),
        "config": str(r["config"]),
        **{k: str(r[k]) for k in ("model", "hardware", "dtype", "kv_dtype")},
        "chips": _whole(r["chips"]),
        "B": _whole(r["B"]),
        "ttft": _number(r["ttft"]),
        "tpot": _number(r["tpot"]),
        "request_latency": _number(r["request_latency"]),
        "per_chip": _number(r["tokens_per_second_per_chip"]),
        "per_user": _number(r["tokens_per_second_per_user"]),
        "meets": meets,
        "miss": [c for c in MISSES if c in miss.split(", ")],
        "verdict": verdict(meets, miss),
        "time_basis": str(r["time_basis"]),
        "ttft_text": fmt.seconds(r["ttft"]),
        "tpot_text": fmt.seconds(r["tpot"]),
        "latency_text": fmt.seconds(r["request_latency"]),
        "per_chip_text": fmt.number(r["tokens_per_second_per_chip"]),
        "per_user_text": fmt.number(r["tokens_per_second_per_user"]),
    }
    if cost:
        row["usd_per_million_tokens"] = _number(r.get(USD))
        row["usd_text"] = usd(r.get(USD))
        row["cost_rank"] = _whole(r.get("cost_rank"))
    if energy:
        row["tokens_per_joule"] = _number(r.get(JOULES))
        row["joule_text"] = fmt.number(r.get(JOULES))
        row["energy_rank"] = _whole(r.get("energy_rank"))
    return row


def _number(value) -> float | None:
    return None if fmt.missing(value) else float(value)


def _whole(value) -> int | None:
    return None if fmt.missing(value) else int(value)
