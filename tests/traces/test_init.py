"""pipeline.import_trace: a hand-made trace of each kind as it comes, to rows and the time left."""

import pytest

import pipeline
from pipeline.errors import ScenarioFileError, UnknownHardware
from tests.helpers import trace_gemm, trace_kernel, trace_launch, trace_op, write_trace

MM = [[64, 128], [128, 256]]


def test_calls_become_rows_with_count_and_their_kernels_time(tmp_path):
    events = [*trace_gemm("aten::mm", 0, MM, 1, 4.0), *trace_gemm("aten::mm", 20, MM, 2, 6.0),
              trace_op("aten::relu", 40, 10, [[64, 256]]), trace_launch(45, 3), trace_kernel(3, 10.0)]  # fmt: skip
    rows = pipeline.import_trace(write_trace(tmp_path / "t.json", events))
    assert rows[["name", "op", "B", "D", "F", "hardware", "count"]].values.tolist() == [
        ["mm_64x128x256_bf16", "matmul", 64, 128, 256, "h100", 2]]  # fmt: skip
    assert rows["measured_seconds"].tolist() == pytest.approx([10e-6])
    left = rows.attrs["unmodelled"]
    assert left["seconds"] == pytest.approx(10e-6) and left["share"] == pytest.approx(0.5)


def test_linear_and_the_addmm_beneath_it_are_one_row_and_memsets_count(tmp_path):
    dims = [[1024], [32, 1024], [1024, 1024], [], []]
    events = [trace_op("aten::linear", 0, 30, [[32, 1024], [1024, 1024], [1024]]),
              trace_op("aten::addmm", 2, 20, dims, ["c10::BFloat16"] * 3 + ["Scalar"] * 2),
              trace_launch(5, 1, name="cudaMemsetAsync"), trace_kernel(1, 1.0, cat="gpu_memset"),
              trace_launch(8, 2, name="cuLaunchKernelEx", cat="cuda_driver"), trace_kernel(2, 9.0)]  # fmt: skip
    rows = pipeline.import_trace(write_trace(tmp_path / "t.json", events))
    assert rows["name"].tolist() == ["addmm_32x1024x1024_bf16"]
    assert rows["measured_seconds"].tolist() == pytest.approx([10e-6])  # the memset counted


def test_backward_ops_on_the_autograd_thread_are_their_own(tmp_path):
    # a forward op on thread 1 runs while the backward mm runs on thread 2: no mixing
    events = [trace_op("aten::mm", 0, 50, MM, tid=1), trace_launch(10, 1, tid=1), trace_kernel(1, 3.0),
              *trace_gemm("aten::mm", 20, [[256, 64], [64, 128]], 2, 5.0, tid=2)]  # fmt: skip
    rows = pipeline.import_trace(write_trace(tmp_path / "t.json", events)).set_index("name")
    assert rows["measured_seconds"].to_dict() == pytest.approx(
        {"mm_64x128x256_bf16": 3e-6, "mm_256x64x128_bf16": 5e-6})  # fmt: skip


def test_older_traces_link_by_external_id(tmp_path):
    events = [trace_op("aten::mm", 0, 10, MM), trace_launch(5, 4, key="External id"),
              trace_kernel(4, 2.0, key="External id")]  # fmt: skip
    rows = pipeline.import_trace(write_trace(tmp_path / "t.json", events))
    assert rows["measured_seconds"].tolist() == pytest.approx([2e-6])


def test_unlaunched_kernels_and_graph_replays_are_said(tmp_path):
    events = [*trace_gemm("aten::mm", 0, MM, 1, 4.0), trace_kernel(50, 6.0),  # launched before the window
              trace_op("CUDAGraph::replay", 100, 10), trace_launch(105, 60, name="cudaGraphLaunch"),
              trace_kernel(60, 3.0), trace_kernel(60, 7.0)]  # fmt: skip
    left = pipeline.import_trace(write_trace(tmp_path / "t.json", events)).attrs["unmodelled"]
    assert (left["kernels_without_launch"], left["graph_replays"]) == (1, 1)
    assert left["kernels_without_launch_seconds"] == pytest.approx(6e-6)
    assert left["graph_replay_seconds"] == pytest.approx(10e-6)
    assert left["seconds"] == pytest.approx(16e-6)


def test_gzip_and_rocm_device_ids_that_do_not_match(tmp_path):
    events = [*trace_gemm("aten::mm", 0, MM, 1, 4.0)]
    events[2]["args"]["device"] = 2  # ROCm: kernels say 2, deviceProperties id 0
    path = write_trace(tmp_path / "t.json.gz", events, device="AMD Instinct MI300X VF", packed=True)
    assert pipeline.import_trace(path)["hardware"].tolist() == ["mi300x"]


def test_a_trace_without_shapes_says_to_record_them(tmp_path):
    events = [trace_op("aten::mm", 0, 10), trace_launch(5, 1), trace_kernel(1, 2.0)]
    with pytest.raises(ScenarioFileError, match=r"record_shapes=True"):
        pipeline.import_trace(write_trace(tmp_path / "t.json", events, record_shapes=0))
    with pytest.raises(ScenarioFileError, match=r"record_shapes=True"):
        pipeline.import_trace(write_trace(tmp_path / "u.json", events))


def test_an_unknown_device_is_named_with_hardware_to_override(tmp_path):
    path = write_trace(
        tmp_path / "t.json", trace_gemm("aten::mm", 0, MM, 1, 4.0), device="Acme Tensor 9000"
    )
    with pytest.raises(UnknownHardware, match=r"'Acme Tensor 9000'.*--hardware"):
        pipeline.import_trace(path)
    assert pipeline.import_trace(path, hardware="MI300X")["hardware"].tolist() == ["mi300x"]
    with pytest.raises(UnknownHardware, match="--hardware acme"):
        pipeline.import_trace(path, hardware="acme")


def test_a_call_whose_kernels_ran_past_the_window_makes_no_row(tmp_path):
    events = [*trace_gemm("aten::mm", 0, MM, 1, 4.0), trace_op("aten::mm", 20, 10, MM),
              trace_launch(25, 2)]  # fmt: skip
    rows = pipeline.import_trace(write_trace(tmp_path / "t.json", events))
    assert rows["count"].tolist() == [1]
    assert rows.attrs["unmodelled"]["calls_without_rows"] == 1


def test_attention_is_one_row_of_the_lowest_attention_op(tmp_path):
    q = [[2, 8, 100, 64]] * 3
    events = [trace_op("aten::scaled_dot_product_attention", 0, 30, q),
              trace_op("aten::_scaled_dot_product_flash_attention", 2, 20, q),
              trace_op("aten::_flash_attention_forward", 3, 15, [[2, 100, 8, 64]] * 3),
              trace_launch(5, 1), trace_kernel(1, 9.0)]  # fmt: skip
    rows = pipeline.import_trace(write_trace(tmp_path / "t.json", events))
    assert rows[["op", "count"]].values.tolist() == [["custom", 1]]
    assert rows["name"].tolist() == ["scaled_dot_product_flash_attention_2x8x100x64_bf16"]
