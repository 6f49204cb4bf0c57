"""The serving answer in one sentence per serve series and model (docs/outputs.md#the-serving-
answer, issue 43): "llama3-70b, 2,048 in / 256 out, TPOT ≤ 30.0 ms: b200 fp8 ×4 at batch 312,
4,714 tokens/s per chip, TTFT 55.0 ms", then the cheapest and the most tokens per joule when
the run has them (issue 44); where no configuration meets the targets, the nearest and why.
Worded once here from Summary.serving for the Answer sheet, the report's first screen, the
notebook and the lines `pipeline run` prints."""

from __future__ import annotations

import pandas as pd

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.text.fleet import listed
from pipeline.render.text.serving_table import targets_text, usd

SERVING_SENTENCES = 20  # sentences said (one per serve series and model); all in summary.json


def serving_sentences(serving: pd.DataFrame, limit: int = SERVING_SENTENCES) -> list[str]:
    """The first `limit` serve series' answers (one per series and model, in Summary.serving's
    order), each in one sentence."""
    if serving is None or serving.empty:
        return []
    keys = serving["series"].astype(str) + "\x00" + serving["model"].astype(str)
    groups = serving.groupby(keys, sort=False).indices  # a few: one per series and model
    return [sentence(serving.iloc[at]) for at in list(groups.values())[:limit]]


def sentence(lines: pd.DataFrame) -> str:
    """One serve series' answer for one model (its Summary.serving lines, in order): the
    request and the targets, then the best configuration, its batch, tokens/s per chip and
    TTFT; configurations tied with it; how many meet the targets when some do not; the
    cheapest and the most tokens per joule; or, with none meeting, the nearest and why."""
    first = lines.iloc[0]
    targets = targets_text(first["ttft_target"], first["tpot_target"])
    head = _(
        "{model}, {isl} in / {osl} out",
        model=_who(str(first["series"]), str(first["model"])),
        isl=fmt.count(first["isl"]),
        osl=fmt.count(first["osl"]),
    )
    if targets:
        head += ", " + targets
    ranked = lines[lines["rank"].notna()]
    if ranked.empty:
        return head + ": " + _nearest(first, bool(targets)) + "."
    best = ranked.iloc[0]
    text = (
        head
        + ": "
        + _(
            "{config} at batch {batch}, {rate} tokens/s per chip, TTFT {ttft}",
            config=best["config"],
            batch=fmt.count(best["B"]),
            rate=_rate(best["tokens_per_second_per_chip"]),
            ttft=fmt.seconds(best["ttft"]),
        )
    )
    if best["time_basis"] == "estimate":
        text += " " + _("(calibrated estimates)")
    else:
        text += _floor_beside_estimates(ranked)
    tied = ranked[ranked["rank"] == best["rank"]].iloc[1:]
    if len(tied):
        text += " " + _("(tied with {configs})", configs=listed(tied["config"].tolist()))
    if len(ranked) < len(lines):
        values = {"meeting": fmt.count(len(ranked)), "n": fmt.count(len(lines))}
        said = {  # (targets given, one meeting)
            (True, True): _("{meeting} of {n} configurations meets the targets", **values),
            (True, False): _("{meeting} of {n} configurations meet the targets", **values),
            (False, True): _("{meeting} of {n} configurations fits in HBM", **values),
            (False, False): _("{meeting} of {n} configurations fit in HBM", **values),
        }
        text += "; " + said[bool(targets), len(ranked) == 1]
    return text + _cheapest(ranked, best) + _most_per_joule(ranked, best) + "."


def _floor_beside_estimates(ranked: pd.DataFrame) -> str:
    """When the best is a floor (no calibration covers its chip) but other configurations are
    calibrated estimates (slower than their floors, as real chips are), the two do not compare:
    say so and name the best calibrated one ('' when every line is a floor)."""
    estimated = ranked[ranked["time_basis"] == "estimate"]
    if estimated.empty:
        return ""
    other = estimated.iloc[0]
    return " " + _(
        "(its floor: no calibration covers it, and floors are lower bounds; the best calibrated "
        "estimate is {config} at batch {batch}, {rate} tokens/s per chip)",
        config=other["config"],
        batch=fmt.count(other["B"]),
        rate=_rate(other["tokens_per_second_per_chip"]),
    )


def _who(series: str, model: str) -> str:
    """Whom a sentence answers for: the model, with its series in front when they differ (two
    series of one model read apart)."""
    if not model or model == series:
        return series or model
    return f"{series} ({model})"


def _nearest(line, targets: bool) -> str:
    """No configuration meets: the nearest one (listed first among the misses) and why."""
    why = []
    missed = str(line["miss"] or "").split(", ")
    if "ttft" in missed:
        why.append(_("TTFT {time} > {target}", time=fmt.seconds(line["ttft"]),
                     target=fmt.seconds(line["ttft_target"])))  # fmt: skip
    if "tpot" in missed:
        why.append(_("TPOT {time} > {target}", time=fmt.seconds(line["tpot"]),
                     target=fmt.seconds(line["tpot_target"])))  # fmt: skip
    if "memory" in missed:
        why.append(_("does not fit in HBM"))
    values = {
        "config": line["config"],
        "batch": fmt.count(line["B"]),
        "why": ", ".join(why) or _("misses"),
    }
    if targets:
        return _("no configuration meets the targets; the nearest, {config} at batch {batch}: "
                 "{why}", **values)  # fmt: skip
    return _("no configuration fits in HBM; the nearest, {config} at batch {batch}: {why}",
             **values)  # fmt: skip


def _cheapest(ranked: pd.DataFrame, best) -> str:
    """'; cheapest: h200 fp8 ×8 at batch 256, $0.410 per million tokens' (or 'also the
    cheapest' when it is the best), when the run has prices."""
    first = _first_ranked(ranked, "cost_rank")
    if first is None:
        return ""
    price = usd(first["usd_per_million_tokens"])
    if first["config"] == best["config"]:
        return "; " + _("also the cheapest, {price} per million tokens", price=price)
    return "; " + _(
        "cheapest: {config} at batch {batch}, {price} per million tokens",
        config=first["config"],
        batch=fmt.count(first["B"]),
        price=price,
    )


def _most_per_joule(ranked: pd.DataFrame, best) -> str:
    """'; most tokens per joule: b200 fp8 ×8, 2.21 tokens/J' (or 'also the most tokens per
    joule'), when the run has the chips' TDP."""
    first = _first_ranked(ranked, "energy_rank")
    if first is None:
        return ""
    value = fmt.number(first["tokens_per_joule"])
    if first["config"] == best["config"]:
        return "; " + _("also the most tokens per joule, {value} tokens/J", value=value)
    return "; " + _(
        "most tokens per joule: {config}, {value} tokens/J", config=first["config"], value=value
    )


def _first_ranked(ranked: pd.DataFrame, column: str):
    """The line ranked first by `column` (None when the lines have no such rank)."""
    if column not in ranked.columns:
        return None
    first = ranked[ranked[column] == 1]
    return first.iloc[0] if len(first) else None


def _rate(value) -> str:
    """Tokens per second: whole above 100 ('4,714'), three digits below ('41.2')."""
    if fmt.missing(value):
        return fmt.DASH
    return fmt.count(value) if float(value) >= 100 else fmt.number(value)
