"""The fleet answer in words (docs/outputs.md#the-fleet-answer): per fleet series and chosen
point of its sweep, its fleet points fastest first and one sentence ("At B = 256 the fastest
is b200 fp8, 32.1 µs (memory-bound); mi300x fp8 is 1.45× slower, tpu-v6e bf16 (the slowest
of 9) 9.63×."), worded once here from Summary.fleet for the report, the workbook and the
notebook."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.model.ranking import POINT
from pipeline.render import format as fmt
from pipeline.render.answer import bound_label

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
    """One chosen point's ranking (rows fastest first, with `label`) in one sentence."""
    first = group.iloc[0]
    where = at_text(str(first["at"]))
    values = {
        "where": where,
        "label": first["label"],
        "time": fmt.seconds(first["t_lower"]),
        "bound": bound_label(first["bound"]),
    }
    if where:
        text = _("At {where} the fastest is {label}, {time} ({bound})", **values)
    else:
        text = _("The fastest is {label}, {time} ({bound})", **values)
    if len(group) == 1:
        return text + "."
    second = group.iloc[1]
    times = fmt.ratio(second["ratio"])
    if times == fmt.ratio(1.0):  # within rounding of the fastest
        text += "; " + _("{label} is as fast ({times})", label=second["label"], times=times)
    else:
        text += "; " + _("{label} is {times} slower", label=second["label"], times=times)
    if len(group) >= 3:
        last = group.iloc[-1]
        text += ", " + _(
            "{label} (the slowest of {n}) {times}",
            label=last["label"],
            n=len(group),
            times=fmt.ratio(last["ratio"]),
        )
    return text + "."


def fleet_answers(fleet: pd.DataFrame, limit: int = FLEET_SERIES) -> list[dict]:
    """The first `limit` fleet series' answers as plain records, one table per series: its
    chosen points as columns (each with its sentence), its fleet points as rows (at most
    FLEET_POINTS, the rest counted in `more`) fastest first at the point the answer leads
    with (its critical batch, else its first), each with its time, ratio to the fastest
    and bound at every chosen point."""
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
        unfit = set(rows.loc[~rows["fits"].astype(bool), "label"])
        first = rows.drop_duplicates("label").set_index("label")
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
                        "fits": label not in unfit,
                        "cells": [cells.get((k, label)) for k in range(len(columns))],
                    }
                    for label in order[:FLEET_POINTS]
                ],
            }
        )
    return answers


def _cell(r) -> dict:
    return {
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
