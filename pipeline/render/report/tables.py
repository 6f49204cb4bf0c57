"""The report's tables below the answer: per chip, the catalog numbers used and its scenarios
grouped by series (single rows listed plainly, each sweep under one line that opens), as plain
records for the template (render.report.page builds the rest of the page)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from pipeline.catalogs.hardware import LINKS
from pipeline.catalogs.spellings import shown_aliases
from pipeline.model.dtypes import DTYPE_COLUMNS, PEAK_FAMILIES
from pipeline.model.roofline import BOUNDS, EFFICIENCIES
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.text import answer
from pipeline.summary.series import KNEES
from pipeline.words import dtype_labels, row_shapes


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts of plain Python values, None for NaN/NA."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


# ---------------------------------------------------------------- scenarios, by series


def shown_rows(results: pd.DataFrame, at: np.ndarray, cap: int) -> np.ndarray:
    """The rows one chip's table shows, of its rows `at` (positions in file order): the first
    `cap`, the slowest (largest t_lower) row of each series among them, and the first and
    slowest row of each series they leave out, for at most `cap` such series (a file of a
    million one-row series would otherwise list every row: hidden_series counts the rest);
    in file order."""
    return _shown(results, at, cap)[0]


def hidden_series(results: pd.DataFrame, at: np.ndarray, cap: int) -> int:
    """How many series of a chip's rows `at` have no row in its capped table (shown_rows)."""
    return _shown(results, at, cap)[1]


def _shown(results: pd.DataFrame, at: np.ndarray, cap: int) -> tuple[np.ndarray, int]:
    if len(at) <= cap:
        return at, 0
    # a series' rows are consecutive (as _blocks reads them): a new code where the name
    # changes (no hashing of a million names)
    names = results["series"].iloc[at].to_numpy(dtype=object)
    starts = np.r_[True, names[1:] != names[:-1]]
    codes = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)  # by code: codes are in file order
    slowest = first.copy()  # a series of one row: that row; of more, sorted out below
    lengths = np.diff(np.r_[first, len(at)])
    if (lengths > 1).any():
        rows = np.flatnonzero(np.repeat(lengths > 1, lengths))
        t = results["t_lower"].to_numpy(dtype=float)[at[rows]]
        by_series = np.lexsort((-t, codes[rows]))  # its slowest first (NaN last)
        ordered = codes[rows][by_series]
        picked = by_series[np.r_[True, ordered[1:] != ordered[:-1]]]
        slowest[codes[rows][picked]] = rows[picked]
    seen = np.zeros(len(first), dtype=bool)
    seen[codes[:cap]] = True
    extra = np.flatnonzero(~seen)  # the series the first `cap` rows leave out
    listed, hidden = extra[:cap], len(extra) - min(len(extra), cap)
    keep = np.zeros(len(at), dtype=bool)
    keep[:cap] = True
    keep[slowest[np.flatnonzero(seen)]] = True  # a series the first rows cut: its slowest
    keep[first[listed]] = True
    keep[slowest[listed]] = True
    return at[keep], hidden


def table_rows(rows: pd.DataFrame, facts: pd.DataFrame) -> list[dict]:
    """The shown rows of one chip's table as records (vectorized; at most the table cap), with
    their facts (the same rows of Record.facts)."""
    collective = (facts["kind"] == "collective").to_numpy()  # V, its size, is the volume
    network_bytes = rows["network_bytes"].to_numpy(dtype=float)
    table = pd.DataFrame(
        {
            "name": rows["name"].astype(str),
            "notes": rows["notes"].fillna("").astype(str),
            "op": rows["op"].astype(str),
            "shape": row_shapes(rows),
            "flops": rows["flops"],
            "hbm_bytes": rows["hbm_bytes"],
            "volume": np.where(collective, network_bytes, np.nan),
            "dtypes": dtype_labels(*(rows[c] for c in DTYPE_COLUMNS)),
            "chips": rows["chips"],
            "shard": rows["shard"].astype(str).replace("nan", ""),
            "t_lower": rows["t_lower"],
            "t_math": rows["t_math"],
            "t_hbm": rows["t_hbm"],
            "t_network": rows["t_network"],
            "bound": rows["bound"].astype(str),
            "intensity": rows["intensity"],
            "critical_intensity": rows["critical_intensity"],
            "net_intensity": facts["network_intensity"].to_numpy(),
            "net_critical": facts["network_critical_intensity"].to_numpy(),
            "critical_batch": rows["critical_batch"],
            "fits": rows["fits"].astype("boolean"),
        }
    )
    return records(table)


def scenario_blocks(record: Record, shown: list[np.ndarray]) -> list[list[dict]]:
    """For each array of row positions (one chip's shown rows, in file order), its rows as
    blocks: a run of single-scenario series is one plain table; each sweep is one block with
    its line (time, bound, shape from the model's series table, worded by render.text.answer) and
    its rows."""
    series = record.results["series"].astype(str).to_numpy(dtype=object)
    return [_blocks(record, at, series[at]) for at in shown]


def _blocks(record: Record, at: np.ndarray, names: np.ndarray) -> list[dict]:
    if not len(at):
        return []
    lines = record.summary.lines
    rows = table_rows(record.results.iloc[at], record.facts.iloc[at])
    swept = (pd.Series(names).map(lines["scenarios"]).fillna(1) > 1).to_numpy()
    cuts = np.flatnonzero(names[1:] != names[:-1]) + 1  # a sweep's rows are consecutive
    starts = [0, *cuts.tolist()]
    blocks: list[dict] = []
    for start, end in zip(starts, [*starts[1:], len(rows)], strict=True):
        if not swept[start]:
            if blocks and not blocks[-1]["sweep"]:
                blocks[-1]["rows"].extend(rows[start:end])
            else:
                blocks.append({"sweep": False, "rows": rows[start:end]})
            continue
        name = str(names[start])
        blocks.append(_sweep_block(name, lines.loc[name], rows[start:end]))
    for block in blocks:  # collectives alone do no math: no intensity columns to show empty
        block["math"] = any(r["intensity"] is not None for r in block["rows"])
    return blocks


def _sweep_block(name: str, line: Mapping, rows: list[dict]) -> dict:
    return {
        "sweep": True,
        "series": name,
        "scenarios": int(line["scenarios"]),
        "shown": len(rows),
        "shape": answer.shape_text(line, sizes=False),  # its rows say a custom op's size
        "time": answer.time_text(float(line["t_min"]), float(line["t_max"])),
        "bound": str(line["bound"]),
        "bound_text": answer.bound_text(line),
        "rows": rows,
    }


# ---------------------------------------------------------------- a sweep chart's table


def chip_series(record: Record, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], dict]:
    """Per (chip, series) of the sweep charts, its line over that chip's rows only (a fleet
    series' own line on each of its chips: Summary.chip_lines, over the whole run), as
    records: the series table's numbers, its chip counts and dtypes as text, whether it is
    a collective, and a collective's latency knee range, whole and per chip."""
    lines = record.summary.chip_lines
    wanted = [(hw, s) for hw, s in dict.fromkeys(pairs) if (s, hw) in lines.index]
    if not wanted:
        return {}
    table = lines.loc[[(s, hw) for hw, s in wanted]].rename(columns={"scenarios": "rows"})
    table["collective"] = table["bytes_min"].notna()
    columns = ["rows", "hardware", "dtype", "chips", *BOUNDS, "critical_min", "critical_max",
               "best_fraction", "t_min", "t_max", "collective", *KNEES]  # fmt: skip
    found = records(table[columns].reset_index(drop=True))
    return {(hw, s): {"name": s, **line} for (hw, s), line in zip(wanted, found, strict=True)}


# ---------------------------------------------------------------- a chip's numbers


def chip_facts(
    rec: dict, used: tuple[set[str], set[str]], derated: pd.DataFrame, chip: pd.Series
) -> dict:
    """A chip's catalog numbers as used in this run: peaks per dtype with their ridge points,
    HBM, links, source; with the derated rates of its most used efficiencies beside them (its
    row of Summary.chips)."""
    used_families, used_links = used
    hbm_bw = rec.get("hbm_bandwidth")
    e = {c: float(chip[c]) for c in EFFICIENCIES}
    others = []
    if len(derated):
        others = [
            f"{fmt.efficiencies(row)} ({fmt.plural(int(row['rows']), 'row')})"
            for _, row in derated.iloc[1:].iterrows()  # a few distinct triples, not rows
        ]
    peaks = [
        {
            "dtype": f,
            "value": rec[f"peak_{f}"],
            "critical": None if fmt.missing(chip[f"ridge_{f}"]) else chip[f"ridge_{f}"],
            "used": f in used_families,
            "derated": chip[f"peak_{f}_derated"],
        }
        for f in PEAK_FAMILIES
        if not fmt.missing(rec.get(f"peak_{f}"))
    ]
    links = [
        {
            "name": link,
            "bandwidth": rec[f"{link}_bandwidth"],
            "topology": rec.get(f"{link}_topology") or "",
            "latency": rec.get(f"{link}_latency"),
            "default": rec.get("default_link") == link,
            "used": link in used_links,
            "derated": chip[f"{link}_bandwidth_derated"],
        }
        for link in LINKS
        if not fmt.missing(rec.get(f"{link}_bandwidth"))
    ]
    return {
        "known": bool(rec),
        "vendor": rec.get("vendor") or "",
        "aliases": shown_aliases(rec.get("aliases")),
        "peaks": peaks,
        "hbm_capacity": rec.get("hbm_capacity"),
        "hbm_bandwidth": hbm_bw,
        "hbm_derated": chip["hbm_bandwidth_derated"] if hbm_bw else None,
        "links": links,
        "derated_rows": int(chip["derated_rows"]),
        "derate": fmt.efficiencies(e) if len(derated) else "",
        "derated_kinds": {k: e[f"{k}_efficiency"] < 1 for k in ("compute", "hbm", "network")},
        "derate_rows": int(chip["top_rows"]),
        "other_derates": others,
        "source": rec.get("source") or "",
        "as_of": rec.get("as_of") or "",
    }
