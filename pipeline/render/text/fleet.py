"""The fleet answer in words (docs/outputs.md#the-fleet-answer): per fleet series and chosen
point of its sweep, its fleet points fastest first and one sentence ("At B = 256 the fastest
is b200 fp8, 32.1 µs (memory-bound); mi300x fp8 is 1.45× slower, tpu-v6e bf16 (the slowest
of 9) 9.63×."), worded once here from Summary.fleet for the report, the workbook and the
notebook."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.model.step_totals import NO_LIMIT
from pipeline.render import format as fmt
from pipeline.render.text.answer import bound_label
from pipeline.summary.fleet import POINT

FLEET_SERIES = 20  # fleet series answered (report, workbook, notebook); all in Summary.fleet
FLEET_POINTS = 50  # fleet points listed per chosen point (the rest counted)


def point_labels(ranking: pd.DataFrame) -> pd.Series:
    """Each ranking row's fleet point in words, naming only what varies in its series:
    'b200 fp8', 'h100 8 chips', 'fp4'."""
    varying = ranking.groupby("series", sort=False)[POINT].nunique() > 1
    shown = varying.reindex(ranking["series"]).to_numpy()
    model = ranking["model"].astype(str).to_numpy(dtype=object)
    hardware = ranking["hardware"].astype(str).to_numpy(dtype=object)
    dtype = ranking["dtype"].astype(str).to_numpy(dtype=object)
    chips = ranking["chips"].astype(int).astype(str).to_numpy(dtype=object)
    # "{chips} chips", not the bottom line's "{n} chips" (chip kinds): a count of one kind
    chips = np.array(
        [_("{chips} chip", chips=c) if c == "1" else _("{chips} chips", chips=c) for c in chips]
    )
    texts = (model, hardware, dtype, chips)  # in POINT's order
    parts = [np.where(shown[:, i], text, "") for i, text in enumerate(texts)]
    joined = [" ".join(p for p in each if p) for each in zip(*parts, strict=True)]
    return pd.Series(joined, index=ranking.index, dtype=object)


def at_text(at: str) -> str:
    """A chosen point's swept values as a sentence says them: 'B=64, D=8192' -> 'B = 64,
    D = 8,192'; '' (a series of fleet axes alone) stays ''."""
    words = []
    for part in filter(None, at.split(", ")):
        dim, _, value = part.partition("=")
        shown = fmt.size(float(value)) if dim == "bytes" else fmt.count(int(value))
        words.append(f"{dim} = {shown}")
    return ", ".join(words)


def sentence(group: pd.DataFrame) -> str:
    """One chosen point's ranking (rows fastest first, with `label`) in one sentence: the
    fastest that fits in HBM (the answer; points tied with it named with it), the faster ones
    that do not fit, the runner-up and the slowest, their times over the answer's, then the
    slower ones that do not fit."""
    t = group["t_lower"].to_numpy(dtype=float)
    fit = group["fits"].to_numpy(dtype=bool)
    where = at_text(str(group["at"].iloc[0]))
    if not fit.any():
        first = group.iloc[0]
        values = {"label": first["label"], "where": where, "time": fmt.seconds(first["t_lower"]),
                  "bound": bound_label(first["bound"])}  # fmt: skip
        text = (
            _("At {where} no fleet point fits in HBM; the fastest, {label}, would take {time} "
              "({bound})", **values)
            if where
            else _("No fleet point fits in HBM; the fastest, {label}, would take {time} "
                   "({bound})", **values)
        )  # fmt: skip
        return text + _runners(group.iloc[1:], t[0], len(group)) + "."
    best = t[fit].min()
    lead = fit & (t == best)
    ahead = ~fit & (t <= best)  # as fast as the answer or faster, and not fitting
    text = _lead(group[lead], where, bool(ahead.any()))
    if ahead.any():
        text += "; " + _ahead(group[ahead], best)
    text += _runners(group[~lead & ~ahead], best, len(group))
    return text + _unfit(group[~fit & ~ahead], where) + _cheapest(group, group[lead]) + "."


def _cheapest(group: pd.DataFrame, lead: pd.DataFrame) -> str:
    """With prices (issue 44, summary.fleet's cost ranks): the cheapest point that fits and the
    one using the least energy (the most tokens per joule), each as a factor of the fastest's
    ('the cheapest that fits is mi300x fp8, 0.400× the fastest's cost'), or the fastest said
    to be it; '' without prices."""
    if "cost_rank" not in group.columns:
        return ""
    fastest = lead.iloc[0]
    first = {}
    for c in ("cost", "energy"):
        top = group[group[f"{c}_rank"] == 1]
        first[c] = None if top.empty else top.iloc[0]
    same = {c: r is not None and r["label"] in set(lead["label"]) for c, r in first.items()}
    if same["cost"] and same["energy"]:
        return "; " + _("the fastest is also the cheapest and uses the least energy")
    parts = []
    if same["cost"]:
        parts.append(_("the fastest is also the cheapest"))
    elif first["cost"] is not None:
        times = fmt.times(first["cost"]["cost"] / fastest["cost"])
        parts.append(_("the cheapest that fits is {label}, {times} the fastest's cost",
                       label=first["cost"]["label"], times=times))  # fmt: skip
    if same["energy"]:
        parts.append(_("the fastest uses the least energy"))
    elif first["energy"] is not None:
        times = fmt.times(first["energy"]["energy"] / fastest["energy"])
        parts.append(_("the least energy, {label}, {times} the fastest's",
                       label=first["energy"]["label"], times=times))  # fmt: skip
    return "".join("; " + p for p in parts)


def _unfit(rest: pd.DataFrame, where: str) -> str:
    """The slower points that do not fit in HBM at this point, named (those ahead of the
    answer are said so already)."""
    if rest.empty:
        return ""
    labels = rest["label"].tolist()
    text = {
        (True, True): _("{label} does not fit in HBM at {where}"),
        (True, False): _("{label} does not fit in HBM"),
        (False, True): _("{labels} do not fit in HBM at {where}"),
        (False, False): _("{labels} do not fit in HBM"),
    }[len(labels) == 1, bool(where)]
    return "; " + text.format(label=labels[0], labels=listed(labels), where=where)


def _lead(lead: pd.DataFrame, where: str, unfit: bool) -> str:
    """The answer: the fastest point (that fits in HBM, when a faster one does not), or the
    points tied as the fastest."""
    first = lead.iloc[0]
    text = {  # (one point, a faster one does not fit, at a chosen point)
        (True, True, True): _("At {where} the fastest that fits in HBM is {label}, {time} "
                              "({bound})"),
        (True, True, False): _("The fastest that fits in HBM is {label}, {time} ({bound})"),
        (True, False, True): _("At {where} the fastest is {label}, {time} ({bound})"),
        (True, False, False): _("The fastest is {label}, {time} ({bound})"),
        (False, True, True): _("At {where} {labels} tie as the fastest that fit in HBM, {time} "
                               "({bound})"),
        (False, True, False): _("{labels} tie as the fastest that fit in HBM, {time} ({bound})"),
        (False, False, True): _("At {where} {labels} tie as the fastest, {time} ({bound})"),
        (False, False, False): _("{labels} tie as the fastest, {time} ({bound})"),
    }[len(lead) == 1, unfit, bool(where)]  # fmt: skip
    return text.format(
        label=first["label"], labels=listed(lead["label"].tolist()), where=where,
        time=fmt.seconds(first["t_lower"]), bound=bound_label(first["bound"]),
    )  # fmt: skip


def _ahead(ahead: pd.DataFrame, best: float) -> str:
    """The points as fast as the answer (`best`) or faster, which do not fit in HBM."""
    t = ahead["t_lower"].to_numpy(dtype=float)
    time = fmt.seconds(t[0])
    if len(ahead) == 1:
        label = ahead["label"].iloc[0]
        if t[0] < best:
            return _("{label} is faster ({time}) but does not fit in HBM", label=label, time=time)
        return _("{label} is as fast but does not fit in HBM", label=label)
    labels = listed(ahead["label"].tolist())
    if (t < best).all():
        return _("{labels} are faster (from {time}) but do not fit in HBM", labels=labels,
                 time=time)  # fmt: skip
    if (t == best).all():
        return _("{labels} are as fast but do not fit in HBM", labels=labels)
    return _("{labels} are as fast or faster (from {time}) but do not fit in HBM",
             labels=labels, time=time)  # fmt: skip


def _runners(rest: pd.DataFrame, best: float, n: int) -> str:
    """The runner-up's and the slowest's times over the answer's (`best`), of `n` points."""
    if rest.empty:
        return ""
    second = rest.iloc[0]
    ratio = second["t_lower"] / best
    times = fmt.times(ratio)  # in a sentence: 1.85× (1.85배)
    if fmt.ratio(ratio) == fmt.ratio(1.0):  # within rounding of the fastest
        text = "; " + _("{label} is as fast ({times})", label=second["label"], times=times)
    else:
        text = "; " + _("{label} is {times} slower", label=second["label"], times=times)
    if len(rest) >= 2:
        last = rest.iloc[-1]
        text += ", " + _(
            "{label} (the slowest of {n}) {times}",
            label=last["label"],
            n=n,
            times=fmt.times(last["t_lower"] / best),
        )
    return text


def listed(labels: list[str], most: int = 4) -> str:
    """Names in a sentence: 'a and b', 'a, b and c'; past `most`, the first three and how
    many more ('a, b, c and 5 more')."""
    if len(labels) == 1:
        return labels[0]
    if len(labels) <= most:
        return _("{first} and {last}", first=", ".join(labels[:-1]), last=labels[-1])
    return _("{first} and {n} more", first=", ".join(labels[:3]), n=fmt.count(len(labels) - 3))


def fleet_answers(fleet: pd.DataFrame, limit: int = FLEET_SERIES) -> list[dict]:
    """The first `limit` fleet series' answers as plain records, one table per series: its
    chosen points as columns (each with its sentence), its fleet points as rows (at most
    FLEET_POINTS, the rest counted in `more`) fastest first at the point the answer leads
    with (its critical batch, else its first), each with its time, ratio to the fastest,
    bound and whether it fits in HBM at every chosen point, and where over its sweep it fits
    (`fits_text`: fits_text)."""
    if fleet.empty:
        return []
    names = list(dict.fromkeys(fleet["series"].astype(str)))[:limit]
    shown = fleet[fleet["series"].astype(str).isin(set(names))].copy()
    shown["label"] = point_labels(shown)
    answers = []
    for name, rows in shown.groupby("series", sort=False):  # at most `limit` series
        groups = list(rows.groupby(["point", "at"], sort=False))
        columns = [
            {"point": str(point), "at": at_text(str(at)), "sentence": sentence(group)}
            for (point, at), group in groups
        ]
        lead = next((k for k, c in enumerate(columns) if c["point"] == "critical batch"), 0)
        order = list(dict.fromkeys(groups[lead][1]["label"]))
        order += [x for x in dict.fromkeys(rows["label"]) if x not in set(order)]
        cells = {
            (k, r.label): _cell(r)
            for k, (_, group) in enumerate(groups)
            for r in group.itertuples(index=False)
        }
        first = rows.drop_duplicates("label").set_index("label")
        single = not any(c["at"] for c in columns)  # a series of its fleet axes alone
        answers.append(
            {
                "series": str(name),
                "lead": lead,
                "sentence": columns[lead]["sentence"],
                "columns": columns,
                "more": max(len(order) - FLEET_POINTS, 0),
                "rows": [
                    {
                        "label": label,
                        "hardware": str(first.at[label, "hardware"]),
                        "dtype": str(first.at[label, "dtype"]),
                        "chips": int(first.at[label, "chips"]),
                        "fits": first.at[label, "fits_where"] == "all",
                        "fits_text": fits_text(
                            first.at[label, "fits_where"],
                            first.at[label, "fits_up_to"],
                            single,
                            first.at[label, "max_batch"] if "max_batch" in first.columns else None,
                        ),
                        "cells": [cells.get((k, label)) for k in range(len(columns))],
                    }
                    for label in order[:FLEET_POINTS]
                ],
            }
        )
    return answers


def fits_text(where: str, up_to: str, single: bool = False, max_batch=None) -> str:
    """Where a fleet point fits in HBM: a point of model steps up to its largest batch that
    fits ('up to B = 185', summary.fleet's max_batch; 'every B (to 2^53)'; 'at no batch'); else
    over the points of its sweep shown (fits_where, fits_up_to): 'at every point', 'up to
    B = 16', 'at some points', 'at no point'; 'yes' or 'no' for a series of one point."""
    if not fmt.missing(max_batch):
        if float(max_batch) >= NO_LIMIT:
            return _("every B (to 2^53)")
        if float(max_batch) < 1:
            return _("at no batch")
        return _("up to {at}", at=f"B = {fmt.count(max_batch)}")
    if single:
        return _("yes") if where == "all" else _("no")
    if where == "up_to":
        return _("up to {at}", at=at_text(up_to))
    return {"all": _("at every point"), "none": _("at no point")}.get(where, _("at some points"))


def fits_reading() -> str:
    """What the Fits in HBM column counts, after its name in the report and the workbook."""
    return _(
        "for model steps, the largest batch that fits (up to B = 185: their max_batch, at their "
        "context S); else over the points of its sweep shown (its chosen points and the line its "
        "chart draws): at every point; up to B = 16: at B = 16 and below, at none above; at some "
        "points; or at no point"
    )


def _cell(r) -> dict:
    return {
        "fits": bool(r.fits),
        "rank": int(r.rank),
        "t_lower": float(r.t_lower),
        "time": fmt.seconds(r.t_lower),
        "ratio": float(r.ratio),
        "ratio_text": fmt.ratio(r.ratio),
        "bound": str(r.bound),
    }


def first_sentences(fleet: pd.DataFrame, limit: int = FLEET_SERIES) -> list[tuple[str, str]]:
    """(series, sentence) per fleet series: the sentence its answer leads with (at its
    critical batch, else at its first chosen point), for the Answer sheet and the notebook."""
    return [(a["series"], a["sentence"]) for a in fleet_answers(fleet, limit)]
