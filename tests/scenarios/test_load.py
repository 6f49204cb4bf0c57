"""Loading and validation: every kind of bad input gets its exact message; good input is typed."""

from __future__ import annotations

import pytest

import pipeline
from pipeline.errors import ScenarioFileError
from pipeline.scenarios import load_scenarios
from tests.helpers import compute_text, load_text, write_scenarios

HEAD = "name,op,B,D,F,hardware"


def messages(tmp_path, catalog, text: str, **kw) -> list[str]:
    loaded = load_text(tmp_path, catalog, text, **kw)
    return [str(p).split(": ", 1)[1] for p in loaded.problems]


def only_message(tmp_path, catalog, text: str, **kw) -> str:
    found = messages(tmp_path, catalog, text, **kw)
    assert len(found) == 1, found
    return found[0]


# -- good input ----------------------------------------------------------------------------


def test_bom_comments_blank_lines_and_case_insensitive_headers(tmp_path, catalog):
    text = "\ufeff# a comment\n\n NAME , Op ,b,d,f, HardWare \n\n# another\nm,MatMul,8,16,32,V5E\n"
    path = tmp_path / "s.csv"
    path.write_text(text, encoding="utf-8")
    loaded = load_scenarios(path, catalog)
    assert not loaded.problems
    row = loaded.frame.iloc[0]
    assert (row["op"], row["hardware"], row["B"], row["F"]) == ("matmul", "tpu-v5e", 8, 32)
    assert row["line"] == 6  # counted as an editor counts: comments and blank lines included
    assert loaded.dims == ("B", "D", "F")


def test_dtype_aliases_and_defaults(tmp_path, catalog):
    text = f"{HEAD},dtype,y_dtype\na,matmul,1,2,3,v5e,bfloat16,\nb,matmul,1,2,3,h100,float32,INT8\n"
    frame = load_text(tmp_path, catalog, text).frame.set_index("name")
    assert tuple(frame.loc["a", ["x_dtype", "y_dtype", "out_dtype", "compute_dtype"]]) == (
        "bf16",
        "bf16",
        "bf16",
        "bf16",
    )
    assert tuple(frame.loc["b", ["x_dtype", "y_dtype", "compute_dtype"]]) == (
        "fp32",
        "int8",
        "fp32",
    )


@pytest.mark.parametrize(
    ("x", "y", "compute"),
    [
        ("int8", "bf16", "bf16"),
        ("bf16", "fp16", "bf16"),
        ("fp16", "bf16", "fp16"),
        ("fp8", "int8", "fp8"),
    ],
)
def test_compute_dtype_is_the_wider_operand(tmp_path, catalog, x, y, compute):
    text = f"{HEAD},x_dtype,y_dtype,peak_flops\na,matmul,1,2,3,h100,{x},{y},1e15\n"
    assert load_text(tmp_path, catalog, text).frame["compute_dtype"].iat[0] == compute


def test_sweeps_list_range_geometric_and_product(tmp_path, catalog):
    text = f"{HEAD}\nl,matmul,128|256|512,8,8,v5e\nr,matmul,1..5,8,8,v5e\ng,matmul,1..4096*2,8,8,v5e\np,matmul,1|2,3|4|5,8,v5e\n"
    frame = load_text(tmp_path, catalog, text).frame
    by = frame.groupby("series")["B"].apply(list)
    assert by["l"] == [128, 256, 512]
    assert by["r"] == [1, 2, 3, 4, 5]
    assert by["g"] == [2**k for k in range(13)]
    p = frame[frame["series"] == "p"]
    assert list(p["name"]) == [f"p[B={b},D={d}]" for b in (1, 2) for d in (3, 4, 5)]
    assert list(frame[frame["series"] == "l"]["name"])[0] == "l[B=128]"
    assert (frame[frame["series"] == "r"]["line"] == 3).all()


def test_unknown_columns_are_carried_through_and_kept_near_misses_too(tmp_path, catalog):
    text = f"{HEAD},team,dtpye,user_dtype\na,matmul,1,2,3,v5e,infra,fp8,x\n"
    loaded = load_text(tmp_path, catalog, text, keep_columns=["dtpye"])
    assert loaded.extras == ("team", "dtpye", "user_dtype")
    assert loaded.frame["team"].iat[0] == "infra"
    assert loaded.frame["dtpye"].iat[0] == "fp8"
    assert loaded.warnings == ()


def test_a_near_miss_column_refuses_the_file_at_the_headers_line(tmp_path, catalog):
    text = f"# fp8 rows\n{HEAD},dtpye\na,matmul,1,2,3,h100,fp8\n"
    with pytest.raises(ScenarioFileError) as exc:
        load_text(tmp_path, catalog, text)
    assert str(exc.value) == (
        f"{tmp_path / 's.csv'}:2: column dtpye: unknown column; did you mean dtype? Rename it, "
        "or, if the column is yours, give --keep-column dtpye (keep_columns= in Python) or "
        "name it user_dtpye; nothing computed for this file"
    )


def test_cells_of_dims_the_op_does_not_use_are_ignored(tmp_path, catalog):
    loaded = load_text(tmp_path, catalog, "name,op,N,B,hardware\nd,dot,10,junk,v5e\n")
    assert not loaded.problems


def test_quoted_newline_in_notes_keeps_line_numbers(tmp_path, catalog):
    text = f'{HEAD},notes\na,matmul,1,2,3,v5e,"two\nlines"\nb,matmul,1,2,3,h10,\n'
    loaded = load_text(tmp_path, catalog, text)
    assert [p.line for p in loaded.problems] == [4]
    assert loaded.frame["notes"].iat[0] == "two\nlines"


# -- one test per kind of bad row, exact message -------------------------------------------


@pytest.mark.parametrize(
    ("header", "row", "expected"),
    [
        (
            HEAD,
            "a,matmul,1,2,3,h10",
            "column hardware: unknown hardware 'h10' (did you mean 'h100'?)",
        ),
        (
            HEAD,
            "a,matmul,1,2,3,",
            "column hardware: empty hardware; name a chip from `pipeline hardware`",
        ),
        (HEAD, "a,matmull,1,2,3,v5e", "column op: unknown op 'matmull' (did you mean 'matmul'?)"),
        (
            HEAD,
            'a,"BD,DQ->BZ",1,2,3,v5e',
            "column op: einsum 'BD,DQ->BZ' has output dim(s) Z that no operand has",
        ),
        (
            HEAD,
            'a,"BD->B",1,2,3,v5e',
            "column op: op 'BD->B' is not a two-operand einsum of single-letter dims like 'BD,DF->BF'",
        ),
        (
            f"{HEAD},dtype",
            "a,matmul,1,2,3,v5e,bf61",
            "column dtype: unknown dtype 'bf61' (did you mean 'bf16'?)",
        ),
        (
            HEAD,
            "a,matmul,1,abc,3,v5e",
            "column D: 'abc' is not a positive integer or a sweep (128|256, 1..512, 1..4096*2)",
        ),
        (
            HEAD,
            "a,matmul,1,0,3,v5e",
            "column D: '0' is not a positive integer or a sweep (128|256, 1..512, 1..4096*2)",
        ),
        (
            HEAD,
            "a,matmul,1,inf,3,v5e",
            "column D: 'inf' is not a positive integer or a sweep (128|256, 1..512, 1..4096*2)",
        ),
        (
            f"{HEAD},hbm_bandwidth",
            "a,matmul,1,2,3,v5e,inf",
            "column hbm_bandwidth: 'inf' is not a positive number",
        ),
        (
            HEAD,
            "a,matmul,1,2.5,3,v5e",
            "column D: '2.5' is not a positive integer or a sweep (128|256, 1..512, 1..4096*2)",
        ),
        (HEAD, "a,matmul,1,,3,v5e", "column D: empty; op matmul needs a value for dim D"),
        (
            "name,op,B,D,hardware",
            "a,matmul,1,2,v5e",
            "column F: op matmul needs dim F, and the file has no column 'F'",
        ),
        (
            HEAD,
            "a,matmul,5..1,2,3,v5e",
            "column B: a range that goes down: '5..1'; a range goes up from 1 or more, by "
            "one (1..64) or times 2 or more (1..64*2): write '1..5'",
        ),
        (
            HEAD,
            "a,matmul,1..64*1,2,3,v5e",
            "column B: a range that never grows (a factor of 1): '1..64*1'; a range goes up "
            "from 1 or more, by one (1..64) or times 2 or more (1..64*2): write '1..64*2'",
        ),
        (HEAD, "a,matmul,1|x,2,3,v5e", "column B: '1|x': sweep item 'x' is not a positive integer"),
        (HEAD, ",matmul,1,2,3,v5e", "column name: empty name; every scenario needs a unique name"),
        (
            f"{HEAD},chips",
            "a,matmul,1,2,3,v5e,two",
            "column chips: 'two' is not a whole number of chips (1 or more)",
        ),
        (
            f"{HEAD},chips",
            "a,matmul,1,2,3,v5e,1.5",
            "column chips: '1.5' is not a whole number of chips (1 or more)",
        ),
        (
            f"{HEAD},chips",
            "a,matmul,1,2,3,v5e,4",
            "column shard: chips = 4 needs a shard dim to split (one of B, D, F)",
        ),
        (
            f"{HEAD},chips,shard",
            "a,matmul,1,2,3,v5e,4,N",
            "column shard: 'N' is not a dim of op matmul (its dims: B, D, F)",
        ),
        (
            f"{HEAD},chips,shard,link",
            "a,matmul,1,2,3,v5e,4,D,nvlnk",
            "column link: unknown link 'nvlnk' (did you mean 'nvlink'?)",
        ),
        (
            f"{HEAD},chips,shard,link",
            "a,matmul,1,2,3,v5e,4,D,nvlink",
            "column link: chip tpu-v5e has no bandwidth for link 'nvlink' (it has ici, pcie, dcn); pick one of those or give link_bandwidth",
        ),
        (
            f"{HEAD},dtype",
            "a,matmul,1,2,3,v5e,fp8",
            "column compute_dtype: chip tpu-v5e has no fp8 peak in the catalog; give a peak_flops column (FLOP/s) or a --hardware file with peak_fp8",
        ),
        (
            "name,op,hardware,bytes",
            "c,custom,v5e,1e6",
            "column flops: op custom needs a positive flops total in column flops",
        ),
        (
            f"{HEAD},peak_flops",
            "a,matmul,1,2,3,v5e,-1",
            "column peak_flops: '-1' is not a positive number",
        ),
        (
            f"{HEAD},measured_seconds",
            "a,matmul,1,2,3,v5e,fast",
            "column measured_seconds: 'fast' is not a positive number",
        ),
        (
            HEAD,
            "a,BD,DF->BF,1,2,3,v5e",
            'column *: 7 fields but the header has 6; quote cells that hold commas, e.g. an einsum op "BD,DF->BF" or a note',
        ),
    ],
)
def test_bad_row_message(tmp_path, catalog, header, row, expected):
    assert only_message(tmp_path, catalog, f"{header}\n{row}\n") == expected


def test_problem_names_file_and_line(tmp_path, catalog):
    loaded = load_text(
        tmp_path, catalog, f"# c\n{HEAD}\nok,matmul,1,2,3,v5e\nbad,matmul,1,2,3,h10\n"
    )
    p = loaded.problems[0]
    assert (p.line, p.name, p.column) == (4, "bad", "hardware")
    assert (
        str(p)
        == f"{tmp_path / 's.csv'}:4: column hardware: unknown hardware 'h10' (did you mean 'h100'?)"
    )


def test_duplicate_name_points_at_first(tmp_path, catalog):
    text = f"{HEAD}\na,matmul,1,2,3,v5e\na,matmul,1,2,3,v5e\n"
    assert only_message(tmp_path, catalog, text) == (
        "column name: duplicate name 'a' (first on line 2); names must be unique"
    )


def test_every_problem_of_a_file_is_reported_and_valid_rows_kept(tmp_path, catalog):
    text = f"{HEAD},dtype\nok,matmul,1,2,3,v5e,bf16\nbad,matmull,0,2,3,h10,bf61\nok2,dot,,,,v5e,\n"
    loaded = load_text(tmp_path, catalog, text)
    assert [(p.line, p.column) for p in loaded.problems] == [
        (3, "op"),
        (3, "hardware"),
        (3, "dtype"),
        (4, "N"),
    ]
    assert list(loaded.frame["name"]) == ["ok"]
    assert loaded.rejected_lines == 2


def test_sweep_past_row_limit_is_rejected(tmp_path, catalog):
    text = f"{HEAD}\nsmall,matmul,1..10,2,3,v5e\nbig,matmul,1..100,1..100,3,v5e\n"
    assert only_message(tmp_path, catalog, text, max_rows=1000) == (
        "column B: expands to 10,000 rows, which takes the file past its limit of 1,000 rows (--max-rows)"
    )


# -- files that cannot be used at all ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "no header and no scenario rows (the file is empty)"),
        ("# only a comment\n\n", "no header and no scenario rows (the file is empty)"),
        (f"{HEAD}\n", "a header but no scenario rows: nothing to compute"),
        (
            "nme,op,B,hardwre\na,matmul,1,v5e\n",
            "1: missing required column(s) 'name' (did you mean 'nme'?), 'hardware' (did you mean"
            " 'hardwre'?); the header needs name, op, hardware",
        ),
        (
            "name,op,b,B,hardware\na,dot,1,1,v5e\n",
            "1: column names appear twice: 'B' (columns 3 and 4)",
        ),
    ],
)
def test_unusable_file(tmp_path, catalog, text, expected):
    path = write_scenarios(tmp_path, text)
    with pytest.raises(ScenarioFileError) as err:
        load_scenarios(path, catalog)
    assert (
        str(err.value) == f"{path}:{expected}" if expected[0].isdigit() else f"{path}: {expected}"
    )


def test_not_utf8(tmp_path, catalog):
    path = tmp_path / "s.csv"
    path.write_bytes(b"name,op,hardware\n\xff\xfe,dot,v5e\n")
    with pytest.raises(
        ScenarioFileError,
        match=r"s\.csv:2: not UTF-8 \(looks like Latin-1 / Windows-1252: byte 0xff at character 1",
    ):
        load_scenarios(path, catalog)


def test_missing_file(tmp_path, catalog):
    with pytest.raises(ScenarioFileError, match="no such file"):
        load_scenarios(tmp_path / "nope.csv", catalog)


def test_input_file_is_not_modified(tmp_path, catalog):
    path = write_scenarios(tmp_path, f"{HEAD}\na,matmul,1,2,3,h10\n")
    before = path.read_bytes()
    load_scenarios(path, catalog)
    assert path.read_bytes() == before


def test_extra_columns_named_like_outputs_are_kept_renamed(tmp_path, catalog):
    loaded = load_text(tmp_path, catalog, f"{HEAD},bound,series,line\na,matmul,1,2,3,v5e,x,y,z\n")
    assert loaded.extras == ("input_bound", "input_series", "input_line")
    row = loaded.frame.iloc[0]
    assert (row["input_bound"], row["input_series"], row["input_line"]) == ("x", "y", "z")
    assert row["line"] == 2 and row["series"] == "a"
    assert loaded.warnings[0].endswith(
        ":1: column 'bound' is also an output column; it is carried through as 'input_bound'"
    )


def test_form_feed_and_line_separator_are_text_not_line_ends(tmp_path, catalog):
    """Only \\n, \\r\\n and \\r end a line (as an editor counts); str.splitlines would also
    split at a form feed or U+2028, shifting every later line number."""
    text = (
        "# a comment sends the file down the line-by-line path\n"
        "name,op,B,D,F,hardware,notes\n"
        "a,matmul,1,64,64,v5e,x\x0cy\n"
        "b,matmul,1,64,64,v5e,p\u2028q\n"
        "c,matmul,1,64,64,h10,\n"
    )
    loaded = load_text(tmp_path, catalog, text)
    assert loaded.frame["notes"].tolist() == ["x\x0cy", "p\u2028q"]
    assert [p.line for p in loaded.problems] == [5]


@pytest.mark.parametrize("space", [c for c in map(chr, range(0x3001)) if c.isspace()] + ["#"])
def test_a_line_starting_with_any_white_space_or_hash_is_seen_by_the_fast_path(
    tmp_path, catalog, space
):
    """The fast path hands files with blank, indented or comment lines to the line-by-line
    path; a line of only white space (any of Unicode's) is blank there, not a scenario."""
    path = tmp_path / "s.csv"
    text = f"{HEAD}\na,matmul,8,16,32,v5e\n{space}\nb,matmul,8,16,32,v5e\n"
    path.write_text(text, encoding="utf-8", newline="")
    loaded = load_scenarios(path, catalog)
    assert not loaded.problems, loaded.problems
    assert list(loaded.frame["name"]) == ["a", "b"]
    assert list(loaded.frame["line"]) == [2, 5 if space == "\n" else 4]  # "\r\n" is one line end


# -- collectives and efficiency (docs/input.md#collectives) ---------------------------------

COLLECTIVE_HEADER = "name,op,bytes,chips,hardware,link,shard,flops,B,compute_efficiency\n"


@pytest.mark.parametrize(
    "row, column, says",
    [
        ("c,all_gather,1e9,1,v5e,,,,,", "chips", "runs over 2 or more chips"),
        ("c,all_gather,1e9,,v5e,,,,,", "chips", "runs over 2 or more chips"),
        ("c,all_reduce,,8,v5e,,,,,", "bytes", "needs bytes, the size of the whole array"),
        ("c,all_to_all,1.5,8,v5e,,,,,", "bytes", "is not a positive integer or a sweep"),
        ("c,all_gather,1e9,8,h100,ici,,,,", "link", "chip h100 has no bandwidth for link 'ici'"),
        ("c,all_gather,1e9,8,v5e,,B,,4,", "shard", "has no shard dim"),
        ("c,all_gather,1e9,8,v5e,,,1e9,,", "flops", "does no FLOPs"),
        ("c,matmul_x,1e9,8,v5e,,,,,", "op", "unknown op"),
        ("m,custom,1..8,,v5e,,,5,,", "bytes", "is not a positive number"),
        ("c,all_gather,1e9,8,v5e,,,,,1.5", "compute_efficiency", "1.5 is above 1"),
        ("c,all_gather,1e9,8,v5e,,,,,0", "compute_efficiency", "is not an efficiency"),
        ("c,all_gather,1e9,8,v5e,,,,,fast", "compute_efficiency", "is not an efficiency"),
    ],
)
def test_collective_and_efficiency_errors_name_the_column(tmp_path, catalog, row, column, says):
    loaded = load_text(tmp_path, catalog, COLLECTIVE_HEADER + row + "\n")
    assert loaded.frame.empty
    assert any(p.column == column and says in p.reason for p in loaded.problems), [
        str(p) for p in loaded.problems
    ]
    assert all(p.line == 2 for p in loaded.problems)


def test_collective_spellings_and_a_bytes_sweep(tmp_path, catalog):
    loaded = load_text(
        tmp_path,
        catalog,
        "name,op,bytes,chips,hardware\n"
        "a,AllGather,1e9,8,v5e\nb,all-reduce,1e9,8,h100\nc,all_to_all,1024..4096*2,4,v5e\n",
    )
    assert not loaded.problems
    frame = loaded.frame
    assert frame["op"].astype(str).tolist()[:2] == ["all_gather", "all_reduce"]
    swept = frame[frame["series"] == "c"]
    assert swept["name"].tolist() == ["c[bytes=1024]", "c[bytes=2048]", "c[bytes=4096]"]
    assert swept["bytes"].tolist() == [1024, 2048, 4096]


def test_a_collective_needs_no_peak_for_its_dtype(tmp_path, catalog):
    hw = tmp_path / "hw.csv"
    hw.write_text("name,peak_fp8,hbm_bandwidth,ici_bandwidth,ici_topology,default_link\n"
                  "fp8chip,1e15,1e12,1e11,ring,ici\n")  # fmt: skip
    analysis = pipeline.analyze(
        [{"name": "c", "op": "all_gather", "bytes": "1e9", "chips": "4", "hardware": "fp8chip"}],
        hardware=hw,
    )
    assert not analysis.problem_list
    assert analysis.results["t_network"].iat[0] == pytest.approx(1e9 / 2e11)


# -- the measured time's unit in its column name (issue 41) --------------------------------


@pytest.mark.parametrize(
    ("column", "cell", "seconds"),
    [
        ("measured_seconds", "0.5", 0.5),
        ("measured_ms", "0.5", 5e-4),
        ("Measured_US", "250", 2.5e-4),
    ],
)
def test_measured_time_in_seconds_ms_or_us(tmp_path, catalog, column, cell, seconds):
    loaded = load_text(tmp_path, catalog, f"{HEAD},{column}\na,matmul,1,2,3,h100,{cell}\n")
    assert not loaded.problems, loaded.problems
    assert loaded.frame["measured_seconds"].iat[0] == pytest.approx(seconds, rel=1e-12)
    assert [c for c in loaded.frame.columns if c.startswith("measured")] == ["measured_seconds"]


def test_two_measured_columns_are_refused_naming_both(tmp_path, catalog):
    text = f"{HEAD},measured_ms,measured_us\na,matmul,1,2,3,h100,1,2\n"
    with pytest.raises(ScenarioFileError, match="measured_ms.*measured_us"):
        load_text(tmp_path, catalog, text)


def test_measured_ms_with_a_unit_in_the_cell_is_refused(tmp_path, catalog):
    text = f"{HEAD},measured_ms\na,matmul,1,2,3,h100,3 ms\n"
    assert only_message(tmp_path, catalog, text) == (
        "column measured_ms: '3 ms' is not a positive number"
    )


def test_a_gemm_table_of_m_n_k_is_a_matmul_or_its_einsum(tmp_path, catalog):
    """docs/input.md: x[m,k] @ W[n,k]^T is matmul B=m, D=k, F=n, or op "MK,NK->MN" as is."""
    text = ('name,op,B,D,F,M,N,K,hardware,x_dtype,y_dtype\n'
            'mm,matmul,48,7168,2048,,,,h100,bf16,fp8\n'
            'es,"MK,NK->MN",,,,48,2048,7168,h100,bf16,fp8\n')  # fmt: skip
    t = compute_text(tmp_path, catalog, text)
    cols = ["flops", "bytes_read", "bytes_written", "t_lower", "bound"]
    assert t.loc["mm", cols].tolist() == t.loc["es", cols].tolist()
