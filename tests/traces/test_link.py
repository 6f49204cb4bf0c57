"""Linking: launches to their GPU work by correlation id, ops to the launches on their thread."""

import numpy as np
import pandas as pd
import pytest

from pipeline.traces.link import gpu_seconds_per_launch, within


def frame(**columns):
    return pd.DataFrame(columns)


def test_gpu_work_is_its_launchs_and_unlaunched_kernels_are_said():
    launches = frame(ts=[1.0, 2.0, 3.0], thread=["a"] * 3, link=[10, 11, 11],
                     name=["cudaLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernelExC"])  # fmt: skip
    gpu = frame(dur=[5.0, 2.0, 1.0, 7.0], link=[10, 11, 11, 99], device=[0] * 4)
    seconds, linked = gpu_seconds_per_launch(launches, gpu)
    # a runtime and a driver launch of one id share its work once
    assert seconds == pytest.approx([5e-6, 3e-6, 0.0])
    assert linked.tolist() == [True, True, True, False]


def test_an_op_holds_the_launches_on_its_thread_while_it_runs():
    ops = frame(ts=[0.0, 2.0, 0.0], dur=[10.0, 3.0, 10.0], thread=["main", "main", "autograd"])
    launches = frame(ts=[1.0, 3.0, 4.0, 6.0, 11.0], thread=["main", "main", "autograd", "main", "main"],
                     link=[1, 2, 3, 4, 5], name=["cudaLaunchKernel"] * 5)  # fmt: skip
    seconds = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    out = within(ops, launches, seconds)
    assert out["launches"].tolist() == [3, 1, 1]
    assert out["gpu_seconds"].tolist() == [11.0, 2.0, 4.0]  # the other thread's, the later, not
    # the outer op has an inner one with launches: the lowest-level op is the inner one
    assert out["inner"].tolist() == [True, False, False]


def test_an_inner_op_without_launches_leaves_the_outer_one_the_lowest():
    ops = frame(ts=[0.0, 1.0, 20.0], dur=[10.0, 2.0, 5.0], thread=["t"] * 3)
    launches = frame(ts=[5.0], thread=["t"], link=[1], name=["hipLaunchKernel"])
    out = within(ops, launches, np.array([1.0]))
    assert out["inner"].tolist() == [False, False, False]
    assert out["launches"].tolist() == [1, 0, 0]


def test_graph_replays_are_counted():
    ops = frame(ts=[0.0], dur=[10.0], thread=["t"])
    launches = frame(ts=[2.0, 3.0], thread=["t", "t"], link=[1, 2],
                     name=["cudaGraphLaunch", "cudaLaunchKernel"])  # fmt: skip
    assert within(ops, launches, np.array([1.0, 1.0]))["graph"].tolist() == [1]
