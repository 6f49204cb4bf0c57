"""Round four of the hostile probe (issue 39), transformer-step rows: the largest batch that
fits agrees with the step's own `fits` (expert parallelism too, at any B), a step's `flops`
is its total on any number of chips, a max_batch past 2^53 is said as no limit, a parameter
count reads sensibly at any size, and a model list with a swept B runs on both engines."""

from __future__ import annotations

import numpy as np
import openpyxl
import pandas as pd
import pytest

import pipeline
from pipeline.model.roofline import EXACT
from pipeline.render import format as fmt
from pipeline.render.charts.step_sweep_data import model_frame, model_sweep_data
from pipeline.render.text.steps_table import models_table
from tests.helpers import invoke, write_scenarios

# MoE steps with expert parallelism, and a dense and a tensor-parallel one for contrast:
# (model, chips, shard, kv_dtype, T, S)
CONFIGS = (
    ("qwen3-30b-a3b", 16, "E", "fp8", 512, 4096),
    ("mixtral-8x7b", 8, "E", "bf16", 1, 4096),
    ("mixtral-8x7b", 2, "E", "fp8", 1, 32768),
    ("qwen3-30b-a3b", 4, "E", "bf16", 128, 8192),
    ("qwen3-30b-a3b", 6, "E", "bf16", 1, 2048),  # chips that divide nothing evenly
    ("llama3-70b", 8, "N", "fp8", 1, 8192),
    ("llama3-8b", 1, "", "bf16", 2048, 2048),
)


def _steps(points: list[tuple[int, tuple]]) -> pd.DataFrame:
    """The total rows of one analysis of a step per (B, config), in that order."""
    rows = [
        {"name": f"s{k}", "op": "transformer", "model": m, "hardware": "h100", "chips": c,
         "shard": shard, "kv_dtype": kv, "B": b, "T": t, "S": s}
        for k, (b, (m, c, shard, kv, t, s)) in enumerate(points)
    ]  # fmt: skip
    results = pipeline.analyze(rows).results.set_index("name")
    return results.loc[[f"s{k}" for k in range(len(points))]]


def test_max_batch_fits_one_more_does_not_and_it_is_the_same_at_any_b():
    first = _steps([(1, cfg) for cfg in CONFIGS])
    most = first["max_batch"].to_numpy(dtype=float)
    assert (most >= 1).all(), most
    points = []
    for m, cfg in zip(most.astype(int), CONFIGS, strict=True):
        points += [(m, cfg), (m + 1, cfg), (max(m // 3, 1), cfg), (m - 1, cfg), (7, cfg)]
    got = _steps(points)
    fits = got["fits"].to_numpy(dtype=bool)
    for k, cfg in enumerate(CONFIGS):
        at, past = fits[5 * k], fits[5 * k + 1]
        assert (at, past) == (True, False), (cfg, most[k])
        seen = got["max_batch"].to_numpy(dtype=float)[5 * k : 5 * k + 5]
        assert (seen == most[k]).all(), (cfg, most[k], seen)  # not a function of B


def test_the_probes_expert_parallel_cases():
    """qwen3-30b-a3b on 16 H100s (E) at T 512, S 4096 said 2,288 where 3,280 fits; Mixtral on
    8 H100s (E) said 1,740, which does not fit."""
    qwen, mixtral = CONFIGS[0], CONFIGS[1]
    got = _steps([(3280, qwen), (1, mixtral), (1740, mixtral)])
    assert bool(got["fits"].iat[0]) and got["max_batch"].iat[0] >= 3280
    assert got["max_batch"].iat[1] == got["max_batch"].iat[2]
    assert bool(got["fits"].iat[2]) == (1740 <= got["max_batch"].iat[2])


@pytest.mark.parametrize(
    ("model", "shard", "chips", "t"),
    [("llama3-70b", "N", (1, 2, 8), 32768), ("mixtral-8x7b", "E", (1, 8), 1),
     ("qwen3-30b-a3b", "N", (1, 4), 512), ("llama3-8b", "N", (1, 3, 16), 1)],
)  # fmt: skip
def test_a_steps_flops_is_its_total_on_any_number_of_chips(model, shard, chips, t):
    rows = [
        {"name": f"c{c}", "op": "transformer", "model": model, "hardware": "h100", "chips": c,
         "shard": shard if c > 1 else "", "B": 4, "T": t, "S": 32768}
        for c in chips
    ]  # fmt: skip
    r = pipeline.analyze(rows).results.set_index("name")
    one = r.loc[f"c{chips[0]}"]
    for c in chips[1:]:
        assert r.loc[f"c{c}", "flops"] == pytest.approx(one["flops"], rel=1e-12), c
        for op in ("attention", "norms", "residual", "mlp_act", "experts_act"):
            if f"c{c}/{op}" not in r.index:  # mlp_act: a dense model's, experts_act an MoE's
                continue
            mine, single = r.loc[f"c{c}/{op}"], r.loc[f"c{chips[0]}/{op}"]
            assert mine["flops"] == pytest.approx(single["flops"], rel=1e-12), (c, op)
            # per chip: the op's share of one chip, as the times were computed from
            assert mine["flops_per_chip"] <= mine["flops"]
            assert mine["t_math"] == pytest.approx(  # count x one op's, both
                mine["flops_per_chip"] / mine["peak_flops"], rel=1e-12
            )


def test_a_tensor_parallel_steps_times_are_those_of_its_per_chip_work():
    """The probe's case: Llama-3-70B prefill at S = 32,768 on 8 chips has the one-chip total,
    7.37e15 FLOPs (it said 4.91e15), and attention's time is one chip's share (N / 8 heads)."""
    rows = [
        {"name": f"c{c}", "op": "transformer", "model": "llama3-70b", "hardware": "h100",
         "chips": c, "shard": "N" if c > 1 else "", "B": 1, "T": 32768, "S": 32768}
        for c in (1, 8)
    ]  # fmt: skip
    r = pipeline.analyze(rows).results.set_index("name")
    assert r.loc["c8", "flops"] == pytest.approx(r.loc["c1", "flops"], rel=1e-12)
    assert r.loc["c1", "flops"] == pytest.approx(7.37e15, rel=1e-3)
    split = r.loc["c8/attention"]
    assert split["flops_per_chip"] == pytest.approx(r.loc["c1/attention", "flops"] / 8)
    assert split["chips"] == 8 and r.loc["c8/norms", "chips"] == 1  # norms: on every chip


def test_a_max_batch_past_2_53_is_said_as_no_limit(tmp_path):
    rows = [{"name": "d", "op": "transformer", "model": "llama3-8b", "hardware": "h100",
             "hbm_capacity": 1e300, "B": 8, "T": 1, "S": 2048}]  # fmt: skip
    analysis = pipeline.analyze(rows)
    step = analysis.results.set_index("name").loc["d"]
    assert step["max_batch"] == EXACT  # every B the tool takes (up to 2^53) fits
    (row,) = models_table(analysis)["rows"]
    assert row["max_batch_text"] == "every B (to 2^53)"
    written = analysis.write(tmp_path / "out", plots=False, report=False)
    sheet = openpyxl.load_workbook(written.folder / "workbook.xlsx", read_only=True)["Models"]
    cells = [c for line in sheet.iter_rows(values_only=True) for c in line]
    assert "every B (to 2^53)" in cells and EXACT not in cells
    swept = pipeline.analyze([{**rows[0], "B": "1..1024*4"}])
    (line,) = model_sweep_data(model_frame(swept), "d").lines
    assert np.isnan(line.limit) and line.limit_label == "fits at every point"  # no line at 2^53


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1, "1"), (0.5, "0.500"), (999, "999"), (1000, "1.00K"), (6.74e9, "6.74B"),
     (125e6, "125M"), (1.5e12, "1.50T"), (405e9, "405B"), (999.7e9, "1.00T"),
     (3e20, "3.00e20"), (1e300, "1.00e300"), (float("nan"), fmt.DASH)],
)  # fmt: skip
def test_a_parameter_count_reads_sensibly_at_any_size(value, shown):
    assert fmt.parameters(value) == shown


def test_a_user_models_params_of_1_shows_as_1(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("name,D,F,N,K,H,L,V,params\nsmall,64,8,4,2,16,2,100,1\n"
                    "huge,64,8,4,2,16,2,100,3e20\n")  # fmt: skip
    one = invoke("models", "small", "--models", path)
    assert one.exit_code == 0, one.output
    assert "params (published)     1\n" in one.stdout
    listed = invoke("models", "--models", path)
    lines = {ln.split()[0]: ln.split() for ln in listed.stdout.splitlines()}
    assert lines["small"][-3] == "1" and lines["huge"][-3] == "3.00e20"
    assert "0.0000" not in listed.stdout and "000,000" not in listed.stdout


MODEL_SWEEP = """
name,op,model,hardware,B,T,S
d,transformer,llama3-8b|mistral-7b,h100,1..256*4,1,2048
"""


def test_a_model_list_with_a_swept_b_runs_and_draws(tmp_path):
    """The README's example: `llama3-8b|mistral-7b` with B = 1..256*4 crashed run (KeyError
    'model' in the sweep chart's data)."""
    path = write_scenarios(tmp_path, MODEL_SWEEP)
    analysis = pipeline.analyze(path)
    assert not analysis.problem_list
    written = analysis.write(tmp_path / "out", workbook=False, report=False)
    pngs = sorted(p.name for p in (written.folder / "plots").glob("*.png"))
    assert any(p.startswith("model-") for p in pngs), pngs
    assert pipeline.charts.sweep(analysis, "h100", "B").get_axes()  # on demand (the model chart)
    listed = write_scenarios(tmp_path, "name,op,hardware,B,D,F,x_dtype\n"
                             "q,matmul,h100,1..8*2,64,64,bf16|fp8\n", "x.csv")  # fmt: skip
    pipeline.analyze(listed).write(tmp_path / "x", workbook=False, report=False)


def test_a_model_list_with_a_swept_b_runs_on_dask(tmp_path, cluster):
    pytest.importorskip("distributed")
    from pipeline.engines.dask.run import run_dask
    from pipeline.run.write import Options

    path = write_scenarios(tmp_path, MODEL_SWEEP)
    got = run_dask(path, tmp_path / "dask", scheduler=cluster.scheduler_address,
                   options=Options(workbook=False, report=False))  # fmt: skip
    assert any((got.folder / "plots").glob("model-*.png"))
    assert np.isfinite(got.record.results["max_batch"].dropna()).all()


def test_an_expert_parallel_step_alone_on_its_chip_draws_its_charts(tmp_path):
    """Found by a review: the issue's own qwen3-30b-a3b on 16 H100 (E) crashed `run` (an
    empty network roofline: the step's total was its only 'communicating' row, with no
    network intensity to place it by); no folder was written."""
    path = write_scenarios(
        tmp_path,
        "name,op,model,hardware,dtype,kv_dtype,chips,shard,B,T,S\n"
        "q,transformer,qwen3-30b-a3b,h100,bf16,fp8,16,E,256,512,4096\n",
    )
    written = pipeline.analyze(path).write(tmp_path / "out", workbook=False, report=False)
    drawn = sorted(p.name for p in written.files if p.suffix == ".png")
    assert "roofline-h100.png" in drawn and not [n for n in drawn if n.startswith("network")]


# Found by a review of issue 39's work: under expert parallelism the rest of the layer is
# batch-split as the einsum rows are, so its busiest chip holds ceil(B / c) sequences


@pytest.mark.parametrize("b", [1, 12, 16])
def test_an_expert_parallel_steps_batch_split_rows_take_the_busiest_chips_share(b):
    rows = [
        {"name": f"c{c}", "op": "transformer", "model": "mixtral-8x7b", "hardware": "h100",
         "dtype": "bf16", "chips": c, "shard": "E" if c > 1 else "", "B": b, "T": 1, "S": 4096}
        for c in (1, 8)
    ]  # fmt: skip
    r = pipeline.analyze(rows).results.set_index("name")
    share = np.ceil(b / 8) / b  # ceil(B / c) of the B sequences on the busiest chip
    for op in ("q_proj", "attention", "norms", "residual", "router", "lm_head"):
        mine = r.loc[f"c8/{op}"]
        assert mine["flops_per_chip"] / mine["flops"] == pytest.approx(share, rel=1e-12), op
        assert mine["flops"] == pytest.approx(r.loc[f"c1/{op}", "flops"], rel=1e-12), op
        assert mine["t_math"] == pytest.approx(mine["flops_per_chip"] / mine["peak_flops"])
    # the experts: E / c on a chip, the token-expert pairs spread evenly over the chips (the
    # best case), the busiest holding ceil(B·T·k / c) of them
    pairs = b * 1 * 2
    for op in ("experts_gate_up", "experts_act", "experts_down"):
        mine = r.loc[f"c8/{op}"]
        assert mine["flops_per_chip"] / mine["flops"] == pytest.approx(
            np.ceil(pairs / 8) / pairs, rel=1e-12
        ), op
        assert mine["flops"] == pytest.approx(r.loc[f"c1/{op}", "flops"], rel=1e-12), op
    assert r.loc["c8", "flops"] == pytest.approx(r.loc["c1", "flops"], rel=1e-12)
    if b == 1:  # one token to 2 of 8 experts: the busiest chip reads one expert's weights
        mine, one = r.loc["c8/experts_gate_up"], r.loc["c1/experts_gate_up"]
        assert mine["hbm_bytes"] == pytest.approx(one["hbm_bytes"] / 2, rel=1e-9)
        # the norms' weights are on every chip, whole
        assert r.loc["c8/norms", "hbm_bytes"] == pytest.approx(r.loc["c1/norms", "hbm_bytes"])


# Found by a review of issue 39's work: a step with `count` = n is n steps: the Models table
# said "Time per step 15.4 ms" (three steps' time) and never said n

COUNTED = """
name,op,model,hardware,dtype,B,T,S,count
d,transformer,llama3-8b,h100,bf16,8,1,2048,3
e,transformer,llama3-8b,h100,bf16,8,1,2048,1
"""


def test_a_counted_steps_models_line_says_its_n_steps(tmp_path):
    from pipeline.render.report.notebook import render_analysis_html

    analysis = pipeline.analyze(write_scenarios(tmp_path, COUNTED))
    table = models_table(analysis)
    three, one = table["rows"]
    assert table["counted"] and (three["count"], one["count"]) == (3, 1)
    t = analysis.results.set_index("name")["t_lower"]
    assert t["d"] == pytest.approx(3 * t["e"])  # three steps of 5.149 ms
    assert three["time"] == "15.4 ms (3 steps)" and one["time"] == "5.15 ms"
    written = analysis.write(tmp_path / "out", plots=False)
    html = (written.folder / "report.html").read_text()
    models = html[html.index('id="models"') :][:8000]
    assert "(3 steps)" in models and "Time<br>per step" not in models
    assert "the time / (n &middot; T)" in models and "n &middot; B &middot; T / the time" in models
    sheet = openpyxl.load_workbook(written.folder / "workbook.xlsx", read_only=True)["Models"]
    lines = [list(line) for line in sheet.iter_rows(values_only=True)]
    header = next(line for line in lines if line[0] == "step")
    at = header.index("steps")
    assert header[at + 1] == "time of the steps"
    assert [line[at] for line in lines[lines.index(header) + 1 :]] == [3, 1]
    notebook = render_analysis_html(analysis)
    assert "(3 steps)" in notebook and "time of the steps" in notebook


def test_an_uncounted_runs_models_line_is_as_before(tmp_path):
    analysis = pipeline.analyze(write_scenarios(tmp_path, COUNTED.replace(",3\n", ",1\n")))
    table = models_table(analysis)
    assert not table["counted"] and "steps" not in table["rows"][0]["time"]
    written = analysis.write(tmp_path / "out", plots=False, report=False)
    sheet = openpyxl.load_workbook(written.folder / "workbook.xlsx", read_only=True)["Models"]
    header = next(line for line in sheet.iter_rows(values_only=True) if line[0] == "step")
    assert "steps" not in header and "time per step" in header
