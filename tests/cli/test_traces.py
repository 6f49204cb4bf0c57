"""`pipeline import-trace TRACE -o rows.csv`: the rows written (atomically, never over a file
unasked nor over the trace), the line of what is not modelled, and nothing of the metadata."""

from __future__ import annotations

import pandas as pd

from tests.helpers import invoke, trace_gemm, trace_kernel, trace_op, write_trace

MM = [[64, 128], [128, 256]]
TOKEN = "hf_PLANTEDtokenDoNotLeak0123456789"


def test_rows_are_written_and_run_as_they_are(tmp_path):
    trace = write_trace(tmp_path / "t.json.gz", [*trace_gemm("aten::mm", 0, MM, 1, 4.0), trace_kernel(9, 4.0)],
                  packed=True)  # fmt: skip
    said = invoke("import-trace", trace, "-o", tmp_path / "rows.csv")
    assert said.exit_code == 0, said.output
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert rows[["name", "op", "hardware", "count"]].values.tolist() == [
        ["mm_64x128x256_bf16", "matmul", "h100", 1]]  # fmt: skip
    assert said.stdout.splitlines()[0].endswith("rows.csv: 1 row (h100)")  # not "1 rows"
    assert said.stdout.splitlines()[-1] == (
        "not modelled: 0.004 ms of 0.008 ms GPU time (50.0%); 1 kernels (0.004 ms) without a "
        "launch in the window; 0 CUDA-graph replays (0 ms) without shapes"
    )
    ran = invoke("validate", tmp_path / "rows.csv")
    assert ran.exit_code == 0, ran.output


def test_an_existing_file_or_the_trace_is_never_written_over(tmp_path):
    trace = write_trace(tmp_path / "t.json", trace_gemm("aten::mm", 0, MM, 1, 4.0))
    out = tmp_path / "rows.csv"
    out.write_text("mine")
    said = invoke("import-trace", trace, "-o", out)
    assert said.exit_code == 1 and "--force" in said.stderr and out.read_text() == "mine"
    assert invoke("import-trace", trace, "-o", out, "--force").exit_code == 0
    assert out.read_text().startswith("name,op,")
    said = invoke("import-trace", trace, "-o", trace, "--force")
    assert said.exit_code == 1 and "the trace itself" in said.stderr
    assert trace.read_text().startswith("{")


def test_hardware_overrides_and_help_explains(tmp_path):
    trace = write_trace(
        tmp_path / "t.json", trace_gemm("aten::mm", 0, MM, 1, 4.0), device="Acme 9000"
    )
    said = invoke("import-trace", trace, "-o", tmp_path / "r.csv")
    assert said.exit_code == 1 and "'Acme 9000'" in said.stderr and "--hardware" in said.stderr
    assert (
        invoke("import-trace", trace, "-o", tmp_path / "r.csv", "--hardware", "B200").exit_code == 0
    )
    assert pd.read_csv(tmp_path / "r.csv")["hardware"].tolist() == ["b200"]
    helped = invoke("import-trace", "--help").stdout
    assert "record_shapes=True" in helped and "measured_seconds" in helped


def test_nothing_of_the_metadata_reaches_any_output_or_error(tmp_path):
    secret = {"metadata": {"env": {"HF_TOKEN": TOKEN}}, "distributedInfo": {"backend": TOKEN}}
    events = [*trace_gemm("aten::mm", 0, MM, 1, 4.0), trace_kernel(9, 4.0),
              {"ph": "X", "cat": "python_function", "name": TOKEN, "pid": 7, "tid": 1, "ts": 0,
               "dur": 1, "args": {"Python id": TOKEN}}]  # fmt: skip
    texts = []
    for device, extra in (("NVIDIA H100 80GB HBM3", []), ("Acme 9000", []),
                          ("NVIDIA H100 80GB HBM3", [trace_op("aten::mm", 50, 5)])):  # fmt: skip
        trace = write_trace(tmp_path / "t.json", events + extra, device=device,
                      record_shapes=0 if extra else 1, **secret)  # fmt: skip
        out = tmp_path / "rows.csv"
        said = invoke("import-trace", trace, "-o", out, "--force")
        texts += [said.stdout, said.stderr, out.read_text() if out.exists() else ""]
    broken = tmp_path / "b.json"
    broken.write_text('{"metadata": {"t": "' + TOKEN + '"}, "traceEvents": [')
    said = invoke("import-trace", broken, "-o", tmp_path / "b.csv")
    texts += [said.stdout, said.stderr]
    assert any("mm_64x128x256_bf16" in t for t in texts)
    assert any("record_shapes=True" in t for t in texts) and any("Acme" in t for t in texts)
    assert not [t for t in texts if TOKEN in t]


def test_a_trace_without_a_gemm_writes_nothing_and_says_why(tmp_path):
    trace = write_trace(tmp_path / "t.json", [trace_kernel(3, 5.0)])
    said = invoke("import-trace", trace, "-o", tmp_path / "r.csv")
    assert said.exit_code == 1 and "no GEMM or attention call" in said.stderr
    assert "(100.0%)" in said.stdout and not (tmp_path / "r.csv").exists()


def test_a_misspelled_hardware_is_a_did_you_mean(tmp_path):
    trace = write_trace(tmp_path / "t.json", trace_gemm("aten::mm", 0, MM, 1, 4.0))
    said = invoke("import-trace", trace, "-o", tmp_path / "r.csv", "--hardware", "h10")
    assert said.exit_code == 1 and "not a chip of the catalog; did you mean h100?" in said.stderr
