"""A PyTorch profiler trace as scenario rows with measured times (docs/input.md#from-a-profiler-
trace): read (read.py), launches linked to their GPU work and ops (link.py), GEMM and attention
calls as rows (rows.py), the chip from the trace's device name (device.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.catalogs.hardware import Hardware, catalog_from
from pipeline.errors import ScenarioFileError, UnknownHardware, printable
from pipeline.traces.device import trace_chip
from pipeline.traces.link import GRAPH_LAUNCHES, gpu_seconds_per_launch, within
from pipeline.traces.read import read_events
from pipeline.traces.rows import ATTENTION, COLUMNS, GEMMS, op_rows


def import_trace(trace: str | Path, *, hardware: str | None = None,
                 catalog: Hardware = None) -> pd.DataFrame:  # fmt: skip
    """Scenario rows of the GEMM and attention calls of `trace` (`.json` or `.json.gz`), one
    per op, shapes and dtypes with `count` and `measured_seconds`; `hardware` (a chip of the
    catalog) overrides the trace's device. `attrs["unmodelled"]`: the GPU time not modelled."""
    path = Path(trace)
    events = read_events(path, (*GEMMS, *ATTENTION))
    ops, launches = pd.DataFrame(events.ops), pd.DataFrame(events.launches)
    gpu = pd.DataFrame(events.gpu)
    chips = catalog_from(catalog)
    if hardware is not None:
        if (chip := chips.resolve(hardware)) is None:
            near = chips.suggest(hardware)
            hint = f"; did you mean {near}?" if near else ""
            raise UnknownHardware(f"--hardware {printable(hardware)}: not a chip of the catalog"
                                  f"{hint} (`pipeline hardware` lists them)")  # fmt: skip
    else:
        chip = trace_chip(events.devices, events.used, chips)
    calls = ops[ops["name"].isin([*GEMMS, *ATTENTION])].reset_index(drop=True)
    shaped = ~calls["dims"].isin(["null", "[]"])
    if len(calls) and (events.record_shapes in (0, False) or not shaped.any()):
        raise ScenarioFileError(f"{printable(path)}: the trace has no shapes; record it with "
                                "torch.profiler.profile(record_shapes=True)")  # fmt: skip
    seconds, linked = gpu_seconds_per_launch(launches, gpu)
    calls = calls.join(within(calls, launches, seconds))
    lowest = calls[(calls["launches"] > 0) & ~calls["inner"]]
    # a call whose kernels ran past the capture window has no time: not a measurement
    rows, modelled = op_rows(lowest[lowest["gpu_seconds"] > 0].reset_index(drop=True))
    rows.insert(rows.columns.get_loc("x_dtype"), "hardware", chip)
    rows["measured_seconds"] = rows["measured_seconds"].round(12)  # µs in the trace: no noise
    total = float(gpu["dur"].sum()) * 1e-6
    graph = launches["name"].isin(GRAPH_LAUNCHES).to_numpy()
    rest = max(total - float(rows["measured_seconds"].sum()), 0.0)
    rows.attrs["unmodelled"] = {
        "seconds": rest,
        "share": rest / total if total else 0.0,
        "gpu_seconds": total,
        "calls_without_rows": int(len(lowest) - modelled.sum()),
        "kernels_without_launch": int((~linked).sum()),
        "kernels_without_launch_seconds": float(gpu["dur"].to_numpy(float)[~linked].sum()) * 1e-6,
        "graph_replays": int(graph.sum()),
        "graph_replay_seconds": float(np.sum(seconds[graph])),
    }
    return rows[[c for c in ("name", "op", *COLUMNS[2:8], "hardware", *COLUMNS[8:])]]
