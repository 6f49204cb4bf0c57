"""The roofs a chip's rows are drawn and worded against (book: "All About Rooflines"): the
compute peak of each dtype family the rows compute in, the bandwidths they move data at (HBM,
or the links they send over), the ridge point where each slope meets each peak, and the
derated roofs of rows timed at a fraction of those rates, with how many rows each holds.
Worked out here, from every row's partial (summary.grids) and the chip's catalog record, into
Summary.roofs; render/ draws and words them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.model.dtypes import DTYPES, PEAK_FAMILIES

MAX_DERATED_ROOFS = 4  # distinct derated roofs drawn on one chart, the most used first
HBM = "hbm"  # the name of the HBM slope (the others are links: ici, nvlink, ...)


def ridge_point(peak, bandwidth):
    """The critical intensity (FLOP/byte) at which a bandwidth's slope meets a compute peak:
    peak / bandwidth (book: TPU v5e bf16 1.97e14 / 8.2e11 = 240; H100 9.89e14 / 3.35e12 = 295;
    over a link, the network ridge: v5e ICI 1.97e14 / 4.5e10 = 4377). Numbers or arrays."""
    return peak / bandwidth


@dataclass(frozen=True)
class Peak:
    """A compute roof: the peak FLOP/s shared by one or more dtype families."""

    families: tuple[str, ...]
    peak: float
    source: str  # "catalog", or "rows" when the chip has no catalog peak for the family

    @property
    def family(self) -> str:
        return "/".join(self.families)


@dataclass(frozen=True)
class Ridge:
    """Where slope `slope` (an index into Roofs.slopes) meets the peak of `family`."""

    family: str
    intensity: float  # FLOP/byte
    peak: float  # FLOP/s
    slope: int


@dataclass(frozen=True)
class Derated:
    """The roof of rows timed at fractions of the rates: the slope at `rate` x its bandwidth,
    each peak at `compute` x the peak; `rows` of the rows given use it."""

    compute: float
    rate: float
    rows: int
    bandwidth: float
    peaks: tuple[float, ...]

    @property
    def ridges(self) -> tuple[float, ...]:
        """Each derated peak's ridge point on the derated slope (FLOP/byte)."""
        return tuple(ridge_point(p, self.bandwidth) for p in self.peaks)


@dataclass(frozen=True)
class Roofs:
    """The roofs of some rows of one chip: peaks (lowest first), slopes as (name, bytes/s)
    (HBM; or each link sent over, fastest first) and the derated roofs (most used first)."""

    peaks: tuple[Peak, ...]
    slopes: tuple[tuple[str, float], ...]
    derated: tuple[Derated, ...] = ()

    @property
    def ridges(self) -> tuple[Ridge, ...]:
        """Every slope meeting every peak, slope by slope."""
        return tuple(
            Ridge(p.family, ridge_point(p.peak, bandwidth), p.peak, i)
            for i, (_, bandwidth) in enumerate(self.slopes)
            for p in self.peaks
        )


def peak_families(compute_dtype: pd.Series) -> np.ndarray:
    """Each row's peak family (peak_<family> in the catalog) of its compute dtype, '' for
    none or an unknown one: one lookup per distinct dtype."""
    codes, dtypes = pd.factorize(compute_dtype)
    families = [DTYPES[d][2] if d in DTYPES else "" for d in map(str, dtypes)]
    return np.array([*families, ""], dtype=object)[codes]  # code -1 (no dtype) -> ""


@dataclass(frozen=True)
class ChipRoofs:
    """The roofs one chip's charts are drawn against, from every row of the run (summary.grids'
    partial, Summary.roofs): its HBM roofline's (rows with FLOPs), its network roofline's (rows
    that send data; None without) and the peak of each family its rows compute in."""

    hbm: Roofs | None
    network: Roofs | None
    peaks: Mapping[str, tuple[float, str]]  # family -> (peak FLOP/s, source)

    def peaks_of(self, families) -> tuple[Peak, ...]:
        """The peaks of rows computing in `families` (a sweep chart's), as Roofs.peaks."""
        return _shared({f: self.peaks[f] for f in self.peaks if f in families})


def _shared(peaks: Mapping[str, tuple[float, str]]) -> tuple[Peak, ...]:
    """One Peak per distinct value (families in PEAK_FAMILIES order), lowest first."""
    by_peak: dict[float, list[str]] = {}
    sources: dict[float, str] = {}
    for family, (peak, source) in peaks.items():
        by_peak.setdefault(peak, []).append(family)
        sources[peak] = source
    return tuple(Peak(tuple(f), p, sources[p]) for p, f in sorted(by_peak.items()))


def chip_roofs(values: pd.DataFrame, derated: pd.DataFrame, chip: Mapping) -> ChipRoofs:
    """A chip's roofs from its rows of the run's roof values and derated rows (summary.grids:
    Grids.values, Grids.derated) and its catalog record: one peak per distinct value its rows
    compute at (the catalog's for each family, else the rows' own median; families with the
    same peak share it), the HBM bandwidth and each link's one-way bandwidth sent over
    (fastest first; the rows' own median when the catalog has none) and the derated roofs of
    (compute, HBM or network) efficiencies (of the network's only when one link)."""
    roofs: dict[str, Roofs | None] = {"roofline": None, "network": None}
    peaks: dict[str, dict[str, tuple[float, str]]] = {}
    for chart in roofs:
        rows = values[values["chart"] == chart]
        if rows.empty:
            continue
        given = rows[rows["kind"] == "peak"]
        peaks[chart] = {f: _rate(chip.get(f"peak_{f}"), given[given["rate"] == f])
                        for f in PEAK_FAMILIES if f in set(given["rate"])}  # fmt: skip
        shared = _shared(peaks[chart])
        if chart == "roofline":
            slopes = [(HBM, _rate(chip.get("hbm_bandwidth"), rows[rows["kind"] == HBM])[0])]
        else:
            sent = rows[rows["kind"] == "link"]
            slopes = [(str(link), _rate(chip.get(f"{link}_bandwidth"), part)[0])
                      for link, part in sent.groupby("rate", sort=True)]  # fmt: skip
            slopes.sort(key=lambda s: -s[1])
        own = derated[derated["chart"] == chart]
        down = derated_roofs(own, shared, slopes[0][1]) if len(slopes) == 1 else ()
        roofs[chart] = Roofs(shared, tuple(slopes), down)
    return ChipRoofs(roofs["roofline"], roofs["network"], peaks.get("roofline", {}))


def _rate(catalog, rows: pd.DataFrame) -> tuple[float, str]:
    """The catalog's rate, else the median of the rows' own (rows: value, rows)."""
    if catalog is not None and np.isfinite(catalog):
        return float(catalog), "catalog"
    return median(rows["value"].to_numpy(dtype=float), rows["rows"].to_numpy()), "rows"


def median(values: np.ndarray, counts: np.ndarray) -> float:
    """The median of distinct `values` each taken `counts` times (NaN ignored), as pandas'
    median of the rows: partials of counted values merge, a median of medians would not."""
    ok = ~np.isnan(values)
    order = np.argsort(values[ok], kind="stable")
    values, cum = values[ok][order], np.cumsum(counts[ok][order])
    if not len(values):
        return float("nan")
    total = int(cum[-1])
    low, high = np.searchsorted(cum, [(total - 1) // 2, total // 2], side="right")
    return float((values[low] + values[high]) / 2)


def derated_roofs(
    derated: pd.DataFrame, peaks: tuple[Peak, ...], bandwidth: float
) -> tuple[Derated, ...]:
    """One roof per distinct (compute, rate) efficiency pair of the rows timed below a
    nominal rate (`derated`: compute, rate, rows), the most used first (ties: the lower
    efficiencies first), at most MAX_DERATED_ROOFS."""
    pairs = derated.groupby(["compute", "rate"], sort=True)["rows"].sum()
    pairs = pairs.iloc[np.argsort(-pairs.to_numpy(), kind="stable")].head(MAX_DERATED_ROOFS)
    return tuple(
        Derated(float(c), float(b), int(n), b * bandwidth, tuple(c * p.peak for p in peaks))
        for (c, b), n in pairs.items()
    )


RATE_KEYS = ["hardware", "kind", "rate"]  # kind: "peak" (a peak family) or "link"


def rates_of(pairs: pd.DataFrame) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """Per chip: the peak families its rows compute in and the links its rows send over,
    from the (chip, rate) pairs of summary.partial.rate_pairs (a few per chip), united."""
    pairs = pairs.drop_duplicates()
    used: dict[str, tuple[set[str], set[str]]] = {}
    for chip, kind, rate in pairs[RATE_KEYS].itertuples(index=False):
        used.setdefault(str(chip), (set(), set()))[kind == "link"].add(str(rate))
    return {chip: (frozenset(f), frozenset(k)) for chip, (f, k) in used.items()}


def catalog_ridges(chip: Mapping) -> dict[str, float | None]:
    """Each peak family a catalog record has, its ridge point on the chip's HBM slope (None
    when the record has no HBM bandwidth)."""
    bandwidth = chip.get("hbm_bandwidth")
    return {
        f: ridge_point(chip[f"peak_{f}"], bandwidth) if bandwidth else None
        for f in PEAK_FAMILIES
        if not _missing(chip.get(f"peak_{f}"))
    }


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))
