"""The roofs a chip's rows are drawn and worded against (book: "All About Rooflines"): the
compute peak of each dtype family the rows compute in, the bandwidths they move data at (HBM,
or the links they send over), the ridge point where each slope meets each peak, and the
derated roofs of rows timed at a fraction of those rates, with how many rows each holds.
Worked out here, from the rows and the chip's catalog record; render/ draws and words them."""

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


def chip_peaks(rows: pd.DataFrame, chip: Mapping) -> tuple[Peak, ...]:
    """One peak per distinct value the rows compute at, lowest first: the catalog's peak for
    each family of their compute dtypes, else the rows' own (median); families with the same
    peak share it."""
    family_of = peak_families(rows["compute_dtype"])
    used = set(pd.unique(family_of))
    by_peak: dict[float, list[str]] = {}
    sources: dict[float, str] = {}
    for family in (f for f in PEAK_FAMILIES if f in used):
        peak = chip.get(f"peak_{family}")
        source = "catalog"
        if peak is None or not np.isfinite(peak):
            peak = float(rows["peak_flops"][family_of == family].median())
            source = "rows"
        by_peak.setdefault(float(peak), []).append(family)
        sources[float(peak)] = source
    return tuple(
        Peak(tuple(families), peak, sources[peak]) for peak, families in sorted(by_peak.items())
    )


def links_used(rows: pd.DataFrame) -> list[str]:
    """The links the rows send over (rows with a collective), A-Z."""
    talking = (rows["collective"] != "").to_numpy(dtype=bool)  # on codes: no text per row
    return sorted({str(link) for link in pd.unique(rows["link"][talking])})


def hbm_roofs(rows: pd.DataFrame, chip: Mapping) -> Roofs:
    """The HBM roofs of rows with FLOPs: the chip's HBM bandwidth (the rows' own when the
    catalog has none), its peaks and the derated roofs of (compute, HBM) efficiencies."""
    bandwidth = chip.get("hbm_bandwidth")
    if bandwidth is None or not np.isfinite(bandwidth):
        bandwidth = float(rows["hbm_bandwidth"].median())
    bandwidth = float(bandwidth)
    peaks = chip_peaks(rows, chip)
    derated = derated_roofs(rows, peaks, bandwidth, "hbm_efficiency")
    return Roofs(peaks, ((HBM, bandwidth),), derated)


def network_roofs(rows: pd.DataFrame, chip: Mapping) -> Roofs:
    """The network roofs of rows that do FLOPs and send data: each link they send over at
    the chip's one-way bandwidth (the rows' own when the catalog has none), fastest first;
    the derated roofs of (compute, network) efficiencies when there is one link."""
    peaks = chip_peaks(rows, chip)
    links = rows["link"].astype(str)
    slopes = []
    for link in links_used(rows):
        bandwidth = chip.get(f"{link}_bandwidth")
        if bandwidth is None or not np.isfinite(bandwidth):
            bandwidth = float(rows.loc[links == link, "link_bandwidth"].median())
        slopes.append((link, float(bandwidth)))
    slopes.sort(key=lambda s: -s[1])
    derated = ()
    if len(slopes) == 1:
        derated = derated_roofs(rows, peaks, slopes[0][1], "network_efficiency")
    return Roofs(peaks, tuple(slopes), derated)


def derated_roofs(
    rows: pd.DataFrame, peaks: tuple[Peak, ...], bandwidth: float, rate: str
) -> tuple[Derated, ...]:
    """One roof per distinct (compute efficiency, `rate` efficiency) of the rows timed below
    a nominal rate, the most used first (at most MAX_DERATED_ROOFS)."""
    if "compute_efficiency" not in rows.columns or rate not in rows.columns or rows.empty:
        return ()
    pairs = derated_pairs(_floats(rows["compute_efficiency"]), _floats(rows[rate]))
    counts = pairs.head(MAX_DERATED_ROOFS)
    return tuple(
        Derated(float(c), float(b), int(n), b * bandwidth, tuple(c * p.peak for p in peaks))
        for (c, b), n in counts.items()
    )


def derated_pairs(compute: np.ndarray, rate: np.ndarray) -> pd.Series:
    """The rows timed below a nominal rate counted per distinct (compute efficiency, rate
    efficiency) pair, the most used first; a missing efficiency is 1 (nominal)."""
    pairs = pd.DataFrame({"c": compute, "b": rate}).fillna(1.0)
    return pairs[(pairs["c"] < 1) | (pairs["b"] < 1)].value_counts(sort=True)


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


def _floats(column: pd.Series) -> np.ndarray:
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))
