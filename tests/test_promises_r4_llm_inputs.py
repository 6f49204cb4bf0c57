"""What the tool promises about transformer rows and models files (issue 39, round four): one
test per finding of the probe on those surfaces, each named for it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import pipeline
from pipeline.cli import cli
from pipeline.errors import InvalidHardwareFile, InvalidModelFile, InvalidResults

STEP = {"name": "d", "op": "transformer", "model": "llama3-8b", "hardware": "h100",
        "B": "32", "T": "1", "S": "2048"}  # fmt: skip


def reasons(a: pipeline.Analysis) -> list[str]:
    return [f"{p.column}: {p.reason}" for p in a.problem_list]


# ------------------------------------------ a step's measured time belongs to its total alone


def test_step_measured_seconds_is_the_totals_alone():
    a = pipeline.analyze([{**STEP, "measured_seconds": "0.012"},
                          {**STEP, "name": "e", "B": "64", "measured_seconds": "0.015"}])  # fmt: skip
    r = a.results.set_index("name")
    measured = r["measured_seconds"].dropna()
    assert sorted(measured.index) == ["d", "e"]
    assert r.loc["d", "measured_seconds"] == 0.012
    assert r["measured_over_predicted"].dropna().index.tolist() == ["d", "e"]
    assert a.summary.findings["measured_total"] == 2


def test_calibrate_says_the_measured_steps_it_leaves_out():
    rows = [{**STEP, "measured_seconds": "0.012"}]
    with pytest.raises(InvalidResults, match=r"transformer step.*'d'.*ops"):
        pipeline.calibrate(rows)
    plain = [
        {"name": f"mm{i}", "op": "matmul", "hardware": "h100", "B": str(b), "D": "4096",
         "F": "4096", "measured_seconds": str(s)}
        for i, (b, s) in enumerate([(1, 1.6e-5), (8, 1.7e-5), (64, 2.0e-5), (256, 3.1e-5),
                                    (1024, 1.1e-4), (4096, 4.2e-4), (16, 1.8e-5)])
    ]  # fmt: skip
    done = pipeline.calibrate([*plain, *rows])
    assert len(done.rows) == len(plain)  # the step's ops are not fitted to the step's time
    assert any("'d'" in w and "left out" in w for w in done.warnings)


def test_cli_calibrate_warns_about_the_measured_steps(tmp_path):
    plain = "".join(
        f"mm{i},matmul,h100,{b},4096,4096,,,,{s}\n"
        for i, (b, s) in enumerate([(1, 1.6e-5), (8, 1.7e-5), (64, 2.0e-5), (256, 3.1e-5),
                                    (1024, 1.1e-4), (4096, 4.2e-4), (16, 1.8e-5)])
    )  # fmt: skip
    f = tmp_path / "prof.csv"
    f.write_text("name,op,hardware,B,D,F,model,T,S,measured_seconds\n" + plain
                 + "d,transformer,h100,32,,,llama3-8b,1,2048,0.012\n")  # fmt: skip
    got = CliRunner().invoke(cli, ["calibrate", str(f), "-o", str(tmp_path / "c.toml")])
    assert got.exit_code == 0, got.output
    assert "warning:" in got.output and "'d'" in got.output


# ---------------------------------------------------------------- count on a transformer row


def test_count_on_a_step_is_n_steps_one_after_another():
    one = pipeline.analyze([STEP]).results.set_index("name")
    two = pipeline.analyze([{**STEP, "count": "2"}]).results.set_index("name")
    for c in ("flops", "hbm_bytes", "t_lower", "t_upper"):
        assert two.loc["d", c] == pytest.approx(2 * one.loc["d", c], rel=1e-12), c
    for c in ("tokens_per_second", "time_per_token", "memory_footprint", "max_batch",
              "weight_bytes", "kv_cache_bytes"):  # fmt: skip
        assert two.loc["d", c] == pytest.approx(one.loc["d", c], rel=1e-12), c
    assert two.loc["d", "count"] == 2
    assert two.loc["d/q_proj", "count"] == 2 * one.loc["d/q_proj", "count"]
    assert two.loc["d/q_proj", "intensity"] == pytest.approx(one.loc["d/q_proj", "intensity"])


# ---------------------------------------------------------------------------------- T > S


def test_more_new_tokens_than_positions_is_refused():
    a = pipeline.analyze([{**STEP, "T": "4096", "S": "2048"}, {**STEP, "name": "ok"}])
    said = reasons(a)
    assert any(s.startswith("T:") and "4096" in s and "2048" in s for s in said), said
    assert set(a.results["series"].str.split("/").str[0]) == {"ok"}


def test_a_swept_t_past_s_refuses_the_row_saying_which_ends():
    a = pipeline.analyze([{**STEP, "T": "1024|2048|4096", "S": "2048|8192"},
                          {**STEP, "name": "ok", "T": "1..2048*2", "S": "2048..4096"}])  # fmt: skip
    said = reasons(a)
    assert len(said) == 1 and said[0].startswith("T: T = up to 4096") and "from 2048" in said[0]
    assert set(a.results["series"].str.split("/").str[0]) == {"ok"}


# --------------------------------------------------------------------- kv_dtype lists


def test_kv_dtype_lists_like_dtype():
    a = pipeline.analyze([{**STEP, "kv_dtype": "bf16|fp8"}])
    assert a.problem_list == ()
    totals = a.results[a.results["op"] == "transformer"].set_index("name")
    assert list(totals.index) == ["d[kv_dtype=bf16]", "d[kv_dtype=fp8]"]
    assert totals["kv_dtype"].tolist() == ["bf16", "fp8"]
    kv = totals["kv_cache_bytes"].to_numpy()
    assert kv[0] == 2 * kv[1]


# ---------------------------------------------------------- the idle-chip warning's range


def test_idle_chip_warning_of_one_value_reads_as_one():
    a = pipeline.analyze([{**STEP, "chips": "1..64*2", "shard": "N"}])
    idle = [w for w in a.warnings if "hold nothing" in w]
    assert len(idle) == 1, a.warnings
    assert "32 to 32" not in idle[0] and "N = 32" in idle[0], idle[0]
    assert "64 chips" in idle[0], idle[0]


def test_idle_chip_warning_names_the_chips_that_idle():
    a = pipeline.analyze([{**STEP, "chips": "1..64*2", "shard": "N", "N": "8", "K": "8"}])
    idle = [w for w in a.warnings if "hold nothing" in w]
    assert len(idle) == 1, a.warnings
    assert "16 to 64 chips" in idle[0] and "3 of this row's 7" in idle[0], idle[0]


# ---------------------------------------------------------------- F and F_expert together


def test_models_file_moe_with_f_is_refused(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("name,D,F,N,K,H,L,V,E,k,F_expert\nmymoe,4096,9999,32,8,128,32,32000,8,2,14336\n")
    with pytest.raises(InvalidModelFile, match=r"column F:.*F_expert"):
        pipeline.models(f, strict=True)


def test_step_row_f_on_an_moe_model_is_refused():
    a = pipeline.analyze([{**STEP, "model": "mixtral-8x7b", "F": "9999"}])
    said = reasons(a)
    assert any(s.startswith("F:") and "F_expert" in s for s in said), said


# -------------------------------------------------------------------- aliases of models


def test_models_file_one_alias_for_two_models_is_refused(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("name,aliases,D,F,N,K,H,L,V\n"
                 "a1,shared-alias,4096,14336,32,8,128,32,32000\n"
                 "a2,shared-alias,4096,14336,32,8,128,32,32000\n")  # fmt: skip
    with pytest.raises(InvalidModelFile, match=r"'shared-alias'.*'a1'"):
        pipeline.models(f, strict=True)


def test_models_file_name_given_as_another_models_alias_is_refused(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('[a1]\naliases = ["b1"]\nD = 4096\nF = 14336\nN = 32\nK = 8\nH = 128\n'
                 "L = 32\nV = 32000\n\n[b1]\nD = 4096\nF = 14336\nN = 32\nK = 8\nH = 128\n"
                 "L = 32\nV = 32000\n")  # fmt: skip
    with pytest.raises(InvalidModelFile, match=r"'a1' again \('b1' is its alias\)"):
        pipeline.models(f, strict=True)


def test_a_model_listed_by_name_and_alias_is_one_model():
    a = pipeline.analyze([{**STEP, "model": "llama3-8b|llama-3-8b|mistral-7b"}])
    said = reasons(a)
    assert len(said) == 1 and "duplicate name" in said[0] and "llama3-8b" in said[0], said
    totals = a.results[a.results["op"] == "transformer"]["name"].tolist()
    assert totals == ["d[model=llama3-8b]", "d[model=mistral-7b]"]
    assert len(a.summary.fleet) > 0


# -------------------------------------------------------- a bare Hangul TOML table name


def test_models_toml_bare_hangul_table_hints_quotes(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text("[라마]\nD = 4096\n", encoding="utf-8")
    with pytest.raises(InvalidModelFile, match=r'\["라마"\]'):
        pipeline.models(f, strict=True)


def test_hardware_toml_bare_hangul_table_hints_quotes(tmp_path):
    f = tmp_path / "h.toml"
    f.write_text("[칩]\npeak_bf16 = 1e15\n", encoding="utf-8")
    with pytest.raises(InvalidHardwareFile, match=r'\["칩"\]'):
        pipeline.load_hardware([f])


def test_toml_bare_hangul_key_hints_quotes(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text("[mine]\n층 = 32\n", encoding="utf-8")
    with pytest.raises(InvalidModelFile, match=r'"층" ='):
        pipeline.models(f, strict=True)


def test_quoted_hangul_table_name_is_a_model(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('["라마"]\nD = 4096\nF = 14336\nN = 32\nK = 8\nH = 128\nL = 32\nV = 32000\n',
                 encoding="utf-8")  # fmt: skip
    assert "라마" in pipeline.models(f, strict=True).index
    a = pipeline.analyze([{**STEP, "model": "라마"}], models=f)
    assert a.problem_list == ()
    assert np.isfinite(a.results["t_lower"].to_numpy(dtype=float)).all()
    assert isinstance(a.results, pd.DataFrame)
