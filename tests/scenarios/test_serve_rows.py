"""scenarios/serve_rows.py: a serve row's isl, osl, targets and speculative decoding, each
problem said with its file, line, column and what would be valid; its model, dims, kv_dtype
and shard checked as a transformer step's."""

from __future__ import annotations

import pandas as pd

import pipeline

SERVE = {"name": "s", "op": "serve", "model": "llama3-8b", "hardware": "h100", "isl": 2048,
         "osl": 256}  # fmt: skip


def reasons(*rows) -> list[tuple[str, str]]:
    a = pipeline.analyze(pd.DataFrame([{**SERVE, **r} for r in rows]))
    return [(p.column, p.reason) for p in a.problem_list]


def test_a_good_serve_row_has_no_problem_and_blank_b_is_found():
    assert reasons({}, {"name": "b", "B": "8|64"}, {"name": "t", "tpot_target": 0.02,
                                                     "ttft_target": "0.5"}) == []  # fmt: skip


def test_isl_and_osl_are_needed_whole_numbers():
    assert reasons({"isl": None}) == [
        ("isl", "a serve row needs isl (the prompt's tokens per request, e.g. 2048)")
    ]
    assert reasons({"osl": "2.5"}) == [
        ("osl", "'2.5' is not the output tokens per request, a whole number (1 or more)")
    ]
    assert reasons({"isl": "0"})[0][0] == "isl"


def test_targets_are_positive_seconds():
    assert reasons({"tpot_target": "-1"}) == [
        ("tpot_target", "'-1' is not the time per output token in seconds, above 0 (e.g. 0.05)")
    ]
    assert reasons({"ttft_target": "fast"})[0][0] == "ttft_target"


def test_speculation_needs_draft_tokens_and_acceptance_together():
    assert reasons({"draft_tokens": 4}) == [
        ("acceptance", "draft_tokens k needs acceptance a, the chance a draft token is "
                       "accepted (0 < a <= 1, e.g. 0.7)")
    ]  # fmt: skip
    got = reasons({"acceptance": 0.7})
    assert [c for c, _ in got] == ["draft_tokens"]
    assert reasons({"draft_tokens": 4, "acceptance": 1.5}) == [
        ("acceptance", "1.5 is above 1; the chance a draft token is accepted is 0 < a <= 1 "
                       "(e.g. 0.7)")
    ]  # fmt: skip
    assert reasons({"draft_tokens": 0, "acceptance": 0.5})[0][0] == "draft_tokens"


def test_an_unknown_draft_model_is_named_with_the_nearest_one():
    assert reasons({"draft_tokens": 4, "acceptance": 0.7, "draft_model": "lama3-8b"}) == [
        ("draft_model", "unknown model 'lama3-8b' (did you mean 'llama3-8b'?)")
    ]


def test_a_dense_draft_model_cannot_split_experts():
    got = reasons({"model": "mixtral-8x7b", "chips": 8, "shard": "E", "draft_tokens": 2,
                   "acceptance": 0.6, "draft_model": "llama3-8b"})  # fmt: skip
    assert [c for c, _ in got] == ["draft_model"]
    assert "shard E" in got[0][1]


def test_t_s_count_measured_and_group_are_not_a_serve_rows():
    got = dict(reasons({"T": 1, "S": 2048, "count": 2, "measured_seconds": 1.0}))
    assert got["T"].startswith("its steps' T and S come from isl and osl")
    assert set(got) == {"T", "S", "count", "measured_seconds"}
    assert "group" in dict(reasons({"group": "g"}))


def test_serve_columns_on_a_row_of_another_op_are_refused():
    matmul = {"name": "m", "op": "matmul", "hardware": "h100", "B": 8, "D": 8, "F": 8,
              "isl": 16}  # fmt: skip
    a = pipeline.analyze([matmul])
    assert [(p.column, p.reason) for p in a.problem_list] == [
        ("isl", "isl is a serve row's (op serve); leave it blank on a row of another op")
    ]


def test_the_model_shard_and_kv_dtype_are_checked_as_a_steps():
    assert reasons({"model": "lama3-8b"})[0] == (
        "model", "unknown model 'lama3-8b' (did you mean 'llama3-8b'?)")  # fmt: skip
    assert [c for c, _ in reasons({"chips": 8, "shard": "D"})] == ["shard"]
    assert [c for c, _ in reasons({"kv_dtype": "fp9"})] == ["kv_dtype"]


def test_a_problem_names_the_file_line_and_column(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("name,op,model,hardware,isl,osl\nok,serve,llama3-8b,h100,8,8\n"
                    "bad,serve,llama3-8b,h100,8,x\n")  # fmt: skip
    a = pipeline.analyze(path)
    assert [str(p) for p in a.problem_list] == [
        f"{path}:3: column osl: 'x' is not the output tokens per request, a whole "
        "number (1 or more)"
    ]


def test_a_misspelt_serve_op_gets_a_did_you_mean():
    assert reasons({"op": "serv"})[0][1].endswith("(did you mean 'serve'?)")


def test_a_column_of_the_users_named_like_a_serve_column_is_carried_as_input(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("name,op,model,hardware,isl,osl,B,ttft\ns,serve,llama3-8b,h100,8,8,2,mine\n")
    a = pipeline.analyze(path)
    assert not a.problem_list and "'ttft' is also an output column" in a.warnings[0]
    assert a.results["input_ttft"].iloc[0] == "mine" and a.results["ttft"].iloc[0] > 0


def test_blank_serve_columns_without_a_serve_row_add_no_dims(tmp_path):
    # the starter workbook has every serve column, blank: its rows' results are the file's own
    path = tmp_path / "m.csv"
    path.write_text("name,op,B,D,F,hardware,isl,osl,tpot_target\nm,matmul,8,64,64,h100,,,\n")
    a = pipeline.analyze(path)
    assert not a.problem_list and not {"T", "S"} & set(a.results.columns)
