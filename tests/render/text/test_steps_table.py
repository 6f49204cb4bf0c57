"""The Models table's records (render.text.steps_table) against the results' total rows: one line
per step, slowest first, every configuration's best among them, with its time, tokens/s, bound and share, weights, KV cache, fit and
the op taking the most time (checked against a plain loop over the op rows); the cap; the
Summary's steps, not the rows (a Dask run's sample); names that look like markup, formulas or
paths; and no steps, no lines."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.catalogs.hardware import load_catalog
from pipeline.engines.dask.sample import sample_plan
from pipeline.model.ops import TRANSFORMER as STEP_OP
from pipeline.render import format as fmt
from pipeline.render.text.steps_table import models_table
from pipeline.scenarios import load_scenarios
from pipeline.summary.partial import computed
from tests.helpers import HOSTILE, ROOT, analyze_file, analyze_rows

MODELS = ROOT / "scenarios" / "models.csv"


@pytest.fixture(scope="module")
def models():
    return analyze_file(MODELS)


def totals(analysis):
    results = analysis.results
    return results[results["op"] == STEP_OP]


def slowest_op(results, name: str) -> tuple[str, float]:
    """The op of step `name` with the most time, the slow way: a loop over its rows."""
    best = ("", -1.0)
    for op_name, t in zip(results["name"], results["t_lower"], strict=True):
        if op_name.startswith(name + "/") and "/" not in op_name[len(name) + 1 :] and t > best[1]:
            best = (op_name[len(name) + 1 :], float(t))
    return best


def test_one_line_per_step_slowest_first_with_the_total_rows_numbers(models):
    table = models_table(models)
    steps = totals(models).sort_values("t_lower", ascending=False, kind="stable")
    assert (table["total"], table["more"]) == (len(steps), 0)
    rows = table["rows"]
    assert [r["name"] for r in rows] == steps["name"].tolist()
    assert len(rows) == 20 and rows[0]["name"] == "llama3_8b_prefill_v5e"  # the slowest
    for r, (_, step) in zip(rows, steps.iterrows(), strict=True):
        assert r["t_step"] == step["t_lower"] and r["time"] == fmt.seconds(step["t_lower"])
        assert r["tokens_per_second"] == step["tokens_per_second"]
        assert r["t_token"] == step["time_per_token"]
        assert (r["model"], r["hardware"], r["chips"]) == (
            step["model"], step["hardware"], step["chips"]
        )  # fmt: skip
        assert (r["B"], r["T"], r["S"]) == (step["B"], step["T"], step["S"])
        assert r["bound"] == step["bound"]
        assert r["bound_share"] == step[f"{step['bound']}_share"]
        assert r["weight_bytes"] == step["weight_bytes"]
        assert r["kv_cache_bytes"] == step["kv_cache_bytes"]
        assert r["fits"] == step["fits"] and r["max_batch"] == step["max_batch"]
        assert (r["footprint"], r["capacity"]) == (step["memory_footprint"], step["hbm_capacity"])
        op, t = slowest_op(models.results, step["name"])
        assert r["top_op"] == op and r["top_share"] == pytest.approx(t / step["t_lower"])


def test_the_words_come_from_the_one_formatter(models):
    rows = {r["name"]: r for r in models_table(models)["rows"]}
    decode = rows["llama3_8b_decode_h100"]
    assert decode["bound_text"] == "memory 100%"
    assert decode["weights"] == "16.1 GB" and decode["kv_cache"] == "8.59 GB"
    assert decode["fits_text"] == "yes: 24.7 GB of 80.0 GB"
    # 32 sequences a step of 7.154 ms: 4,473 tokens/s; attention 35.9 % of the step
    assert decode["tokens_per_second"] == pytest.approx(32 / decode["t_step"])
    assert decode["tokens"] == "4,473" and decode["time"] == "7.15 ms"
    assert decode["top_text"] == "attention 35.9%"
    prefill = rows["llama3_8b_prefill_v5e"]
    assert prefill["bound_text"] == "compute 92.6%"
    assert prefill["fits_text"].startswith("no: ") and prefill["max_batch_text"] == "0"
    assert rows["llama3_8b_decode_sweep[B=512]"]["B"] == 512


def test_a_cap_keeps_the_first_steps_and_counts_the_rest(models):
    table = models_table(models, limit=3)
    assert (len(table["rows"]), table["total"], table["more"]) == (3, 20, 17)
    assert table["rows"] == models_table(models)["rows"][:3]


WALK = {"op": "transformer", "model": "llama3-70b", "hardware": "h100|b200", "dtype": "bf16|fp8",
        "chips": "4|8", "shard": "N", "B": "1..256*2", "T": 1, "S": 8192}  # fmt: skip


@pytest.fixture(scope="module")
def walk():
    """A planner's fleet (issue 43): 8 configurations x 9 batches, 72 steps."""
    return analyze_rows([{"name": "dec", **WALK}])


def test_a_fleet_shows_every_configuration_at_its_best_and_its_slowest_steps(walk):
    table = models_table(walk)
    rows = table["rows"]
    assert (len(rows), table["total"], table["more"]) == (50, 72, 22)
    t = [r["t_step"] for r in rows]
    assert (
        t == sorted(t, reverse=True)
        and rows[0]["name"] == max(totals(walk).itertuples(), key=lambda r: r.t_lower).name
    )  # the slowest of the 72 first
    configurations = {(h, d, c) for h in ("h100", "b200") for d in ("bf16", "fp8") for c in (4, 8)}
    best = [r for r in rows if r["best"]]
    assert {(r["hardware"], r["dtype"], r["chips"]) for r in best} == configurations
    steps = totals(walk)
    for r in best:  # the most tokens/s of its configuration's steps that fit
        mine = steps[(steps["hardware"] == r["hardware"]) & (steps["x_dtype"] == r["dtype"])
                     & (steps["chips"] == r["chips"]) & steps["fits"].astype(bool)]  # fmt: skip
        assert r["fits"] and r["tokens_per_second"] == mine["tokens_per_second"].max()


def test_the_table_is_the_summarys_whatever_rows_the_record_holds(models):
    """A Dask run's record holds a sample of the rows (here: its B sweep thinned, the first
    steps' op rows left out): the table still shows every step and each one's top op, read
    from the Summary (summary.partial.step_table), never from the rows."""
    plan = load_scenarios(MODELS, load_catalog(), planned=True).planned
    sample = sample_plan(plan, budget=12)  # the sweep over B keeps its first and last
    results, *_ = computed(sample.rows(0, sample.total))
    whole = models_table(models)
    assert models_table(replace(models, _results=results, sampled=True)) == whole
    kept = models.results[models.results.index > 30]  # the first steps' ops out
    assert models_table(replace(models, _results=kept, sampled=True)) == whole
    names = [r["name"] for r in whole["rows"]]
    assert "llama3_8b_decode_sweep[B=2]" in names and whole["rows"][0]["top_op"]


@pytest.mark.parametrize("name", [*HOSTILE, "=cmd|' /C calc'!A0", "a/b"])
def test_any_name_is_kept_as_written(name):
    step = {"op": "transformer", "model": "llama3-8b", "hardware": "h100", "B": 8, "T": 1,
            "S": 1024}  # fmt: skip
    a = analyze_rows([{"name": name, **step}, {"name": "next", **step}])
    rows = models_table(a)["rows"]
    assert [r["name"] for r in rows] == [name, "next"]
    assert rows[0]["top_op"] == rows[1]["top_op"] == "mlp_gate"  # "a/b"'s ops are a/b/...


def test_no_step_no_lines(book):
    assert models_table(book) == {
        "rows": [],
        "counted": False,
        "total": 0,
        "more": 0,
    }
