"""Linking as the trace records it: a launch (a `cuda_runtime`/`cuda_driver` event:
cudaLaunchKernel, cuLaunchKernelEx, hipLaunchKernel, cudaMemsetAsync, ...) to the GPU work it
started by their shared `correlation` id, and an op to the launches made on its thread while
it ran (itself or an op it called). All by sorting and searching arrays, no loop over events."""

from __future__ import annotations

import numpy as np
import pandas as pd

GRAPH_LAUNCHES = ("cudaGraphLaunch", "hipGraphLaunch", "cuGraphLaunch")


def gpu_seconds_per_launch(
    launches: pd.DataFrame, gpu: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray]:
    """Per launch, the seconds of GPU work with its link id (kernels, memsets, copies), and per
    GPU event whether a launch in the window started it."""
    launch_link = launches["link"].to_numpy(np.int64)
    gpu_link = gpu["link"].to_numpy(np.int64)
    linked = np.isin(gpu_link, launch_link[launch_link >= 0]) & (gpu_link >= 0)
    seconds = gpu["dur"].to_numpy(float) * 1e-6
    per_link = pd.Series(seconds[linked]).groupby(gpu_link[linked]).sum()
    per_launch = pd.Series(launch_link).map(per_link).fillna(0.0).to_numpy(float)
    # two launches with one id (a runtime call and the driver call beneath it) share its work once
    first = ~pd.Series(launch_link).duplicated().to_numpy() | (launch_link < 0)
    return per_launch * first, linked


def within(ops: pd.DataFrame, launches: pd.DataFrame, seconds: np.ndarray) -> pd.DataFrame:
    """Per op (`ts`, `dur` in µs, `thread`), the launches on its thread from its start to its end:
    `launches` (how many), `gpu_seconds` (their work's), `graph` (of them CUDA-graph replays);
    and `inner`, whether another of `ops` with launches runs inside it (its own are then its
    inner op's: the lowest-level op is the one that launched the kernels)."""
    out = pd.DataFrame(index=ops.index, data={"launches": 0, "gpu_seconds": 0.0, "graph": 0,
                                               "inner": False})  # fmt: skip
    is_graph = launches["name"].isin(GRAPH_LAUNCHES).to_numpy()
    for thread, at in ops.groupby("thread", sort=False).indices.items():
        mine = (launches["thread"] == thread).to_numpy()
        times = launches["ts"].to_numpy(float)[mine]
        order = np.argsort(times, kind="stable")
        times = times[order]
        cum = np.concatenate([[0.0], np.cumsum(seconds[mine][order])])
        cum_graph = np.concatenate([[0], np.cumsum(is_graph[mine][order])])
        start = ops["ts"].to_numpy(float)[at]
        end = start + ops["dur"].to_numpy(float)[at]
        lo, hi = np.searchsorted(times, start, "left"), np.searchsorted(times, end, "right")
        out.iloc[at, 0] = hi - lo
        out.iloc[at, 1] = cum[hi] - cum[lo]
        out.iloc[at, 2] = cum_graph[hi] - cum_graph[lo]
        # nesting: sorted by start, outer first at a tie, an op's inner ops follow it up to its end
        busy = hi > lo
        sort = np.lexsort((-end, start))
        s_start, s_end, s_busy = start[sort], end[sort], busy[sort]
        busy_before = np.concatenate([[0], np.cumsum(s_busy)])
        last = np.searchsorted(s_start, s_end, "left")
        inner = busy_before[last] - busy_before[np.arange(len(sort)) + 1] > 0
        out.iloc[at[sort], 3] = inner
    return out
