"""Collectives: the time of an AllGather, ReduceScatter, AllReduce or AllToAll of an array of
V bytes over N chips, and what each leaves on a chip (docs/model.md#collectives).

Book "Sharded Matmuls" (ring/torus, TPU ICI) and "GPUs" (switch, NVLink): one phase of an
AllGather or ReduceScatter takes V / W_bidi on a bidirectional ring (W_bidi = 2 x the one-way
bandwidth W) and V (N-1) / (N W) through a switch; an AllReduce is a ReduceScatter and an
AllGather, two phases; an AllToAll is a quarter of an AllGather on a ring and V (N-1) / (N^2 W)
through a switch. Every phase takes at least the hop latency x N / 2.
"""

from __future__ import annotations

import numpy as np

from pipeline.model.ops import COLLECTIVES

ALL_GATHER, REDUCE_SCATTER, ALL_REDUCE, ALL_TO_ALL = COLLECTIVES
# the `collective` column's values: none, then every collective (code = index)
KINDS = ("", *COLLECTIVES)
PHASES = np.array([0.0, 1.0, 1.0, 2.0, 1.0])  # per KINDS code
ALL_TO_ALL_CODE = KINDS.index(ALL_TO_ALL)


def collective_time(
    volume: np.ndarray,
    chips: np.ndarray,
    bandwidth: np.ndarray,
    topology: np.ndarray,
    latency: np.ndarray,
    phases: np.ndarray,
    all_to_all: np.ndarray | bool = False,
) -> np.ndarray:
    """Seconds for a collective of `phases` phases (AllReduce = 2, none = 0) of an array of V
    bytes over N chips; `bandwidth` is the one-way link bandwidth per chip (already derated by
    the row's network efficiency), `topology` True (or "ring") for a ring, else a switch."""
    ring = topology if topology.dtype == bool else topology == "ring"
    with np.errstate(divide="ignore", invalid="ignore"):
        per_phase = np.where(
            ring, volume / (2.0 * bandwidth), volume * (chips - 1) / (chips * bandwidth)
        )
        share = np.where(ring, 0.25, 1.0 / chips)  # an AllToAll moves this much of an AllGather
        per_phase = np.where(all_to_all, per_phase * share, per_phase)
    floor = latency * chips / 2.0
    return np.where(phases > 0, phases * np.maximum(per_phase, floor), 0.0)


def latency_knee(
    chips: np.ndarray,
    bandwidth: np.ndarray,
    topology: np.ndarray,
    latency: np.ndarray,
    phases: np.ndarray,
    all_to_all: np.ndarray | bool = False,
) -> np.ndarray:
    """The V (bytes) at which a collective stops being latency-bound: where a phase's
    bandwidth time (linear in V, as collective_time has it) meets its floor, the hop latency x
    N / 2 (book: v5e ICI, 45 kB per chip: 720 kB over 16 chips). NaN for no collective or no
    known hop latency; inf when the time never leaves the floor (one chip through a switch)."""
    ring = topology if topology.dtype == bool else topology == "ring"
    with np.errstate(divide="ignore", invalid="ignore"):
        per_byte = np.where(ring, 1.0 / (2.0 * bandwidth), (chips - 1) / (chips * bandwidth))
        share = np.where(ring, 0.25, 1.0 / chips)
        per_byte = np.where(all_to_all, per_byte * share, per_byte)
        knee = (latency * chips / 2.0) / per_byte
    return np.where((phases > 0) & (latency > 0), knee, np.nan)


def collective_footprint(kind: np.ndarray, volume: np.ndarray, chips: np.ndarray) -> np.ndarray:
    """Per-chip bytes a collective row holds, input and output (as an op's operands and
    output): AllGather V/N in, V out; ReduceScatter V in, V/N out; AllReduce V in, V out;
    AllToAll V/N in, V/N out. `kind` holds KINDS codes (0: no collective row, footprint 0)."""
    shard = volume / chips
    table = np.stack([np.zeros_like(volume), shard + volume, volume + shard, 2 * volume, 2 * shard])
    return np.take_along_axis(table, kind[None, :].astype(np.intp), axis=0)[0]
