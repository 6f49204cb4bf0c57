"""Property-based fuzzing of the command line: whatever a user writes in a dim cell, a sweep,
a hardware cell or a hardware file, the tool answers with a message and an exit code (0, 1
or 2), never a traceback, and within bounded memory. And of the Python API: whatever frame
and arguments `analyze()` gets, it returns an Analysis or raises a PipelineError, TypeError
or ValueError with a message, never another exception."""

from __future__ import annotations

import csv
import io
import os
import tracemalloc
import warnings
from contextlib import suppress
from decimal import Decimal
from fractions import Fraction
from numbers import Integral

import numpy as np
import pandas as pd
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

import pipeline
from pipeline.cli import cli
from pipeline.errors import PipelineError
from pipeline.limits import MAX_ROWS_LIMIT
from tests.helpers import toml_text

MEMORY_LIMIT = 200e6  # bytes traced per example (numpy and Python), at --max-rows 20000
# make soak sets FUZZ_EXAMPLES=1000; make test: 25 examples of the command line (two commands
# under tracemalloc each; the 25 draw every kind of cell), 50 of the Python API (cheaper)
SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
API_SETTINGS = settings(SETTINGS, max_examples=int(os.environ.get("FUZZ_EXAMPLES", "50")))

whole = st.integers(min_value=-5, max_value=2**70)
small = st.integers(min_value=0, max_value=10**7)
dim_cell = st.one_of(
    whole.map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.builds(lambda a, b: f"{a}..{b}", small, small),
    st.builds(lambda a, b, c: f"{a}..{b}*{c}", small, whole, st.integers(-2, 10)),
    st.lists(whole, min_size=1, max_size=6).map(lambda v: "|".join(map(str, v))),
    st.sampled_from(
        [
            "",
            " ",
            "1e3",
            "4096.0",
            "0x10",
            "1_000",
            "+5",
            "..",
            "|",
            "1..",
            "..5",
            "1..5*",
            "1..5*1",
            "1|1" + "0" * 400,
            "1..1" + "0" * 400 + "*2",
            "nan",
            "-inf",
            "1e309",
        ]
    ),  # fmt: skip
    st.text(max_size=16),
)
hardware_cell = st.one_of(
    st.sampled_from(["v5e", "H100", "tpu-v5e", "h10", "", "=cmd()", "v5e\n", "gb200"]),
    st.text(max_size=12),
)
number_cell = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    whole.map(str),
    st.sampled_from(["", "fast", "1e12", "-1", "0"]),
    st.text(max_size=8),
)


def _csv(rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8", "surrogatepass")


def _invoke_bounded(args: list[str]):
    tracemalloc.start()
    try:
        result = CliRunner().invoke(cli, args, catch_exceptions=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    assert result.exit_code in (0, 1, 2), result.output
    assert peak < MEMORY_LIMIT, f"{peak / 1e6:.0f} MB traced"
    return result


@SETTINGS
@given(
    cells=st.lists(st.tuples(dim_cell, dim_cell, dim_cell, hardware_cell), min_size=1, max_size=3),
    chips=st.one_of(whole.map(str), st.just(""), st.text(max_size=6)),
)
def test_dim_sweep_and_hardware_cells_never_crash(tmp_path_factory, cells, chips):
    folder = tmp_path_factory.mktemp("fuzz")
    rows = [["name", "op", "B", "D", "F", "hardware", "chips", "shard"]]
    for i, (b, d, f, hw) in enumerate(cells):
        rows.append([f"r{i}", "matmul", b, d, f, hw, chips, "B" if chips else ""])
    path = folder / "s.csv"
    path.write_bytes(_csv(rows))
    limit = ["--max-rows", "20000"]  # memory grows with the scenarios allowed, by design
    _invoke_bounded(["validate", str(path), *limit])
    out = folder / "out"
    _invoke_bounded(["run", str(path), "-o", str(out), "--no-plots", "--no-workbook", "-q", *limit])


@SETTINGS
@given(
    name=st.one_of(st.sampled_from(["mine", "v5e", "h100", ""]), st.text(max_size=10)),
    aliases=st.one_of(st.sampled_from(["", "v5e", "a;b", "m1"]), st.text(max_size=10)),
    bandwidth=number_cell,
    peak=number_cell,
    link=st.one_of(st.sampled_from(["", "ici", "nvlink", "warp"]), st.text(max_size=6)),
    topology=st.one_of(st.sampled_from(["", "ring", "switch", "mesh"]), st.text(max_size=6)),
    toml=st.booleans(),
)
def test_hardware_files_never_crash(
    tmp_path_factory, name, aliases, bandwidth, peak, link, topology, toml
):
    folder = tmp_path_factory.mktemp("hw")
    if toml:
        text = (
            f'["{toml_text(name)}"]\naliases = "{toml_text(aliases)}"\n'
            f'hbm_bandwidth = "{toml_text(bandwidth)}"\npeak_bf16 = "{toml_text(peak)}"\n'
            f'default_link = "{toml_text(link)}"\nici_topology = "{toml_text(topology)}"\n'
        )
        hw = folder / "mine.toml"
        hw.write_bytes(text.encode("utf-8", "surrogatepass"))
    else:
        header = ["name", "aliases", "hbm_bandwidth", "peak_bf16", "default_link", "ici_topology"]
        hw = folder / "mine.csv"
        hw.write_bytes(_csv([header, [name, aliases, bandwidth, peak, link, topology]]))
    scenarios = folder / "s.csv"
    scenarios.write_text("name,op,B,D,F,hardware\na,matmul,1,2,3,mine\nb,matmul,4,5,6,v5e\n")
    _invoke_bounded(["validate", "--hardware", str(hw), str(scenarios)])


# ---------------------------------------------------------------- the Python API

column_name = st.one_of(
    st.sampled_from(["name", "op", "B", "D", "F", "hardware", "chips", "shard", "bytes",
                     "dtype", "notes", "measured_seconds", "peak_flops", "t_lower", "b", ""]),
    st.text(max_size=6),
    st.integers(-3, 3),
    st.floats(allow_nan=True),
    st.sampled_from([None, True, b"op", ("B", 1)]),
)  # fmt: skip
odd_value = st.one_of(
    st.sampled_from(["matmul", "attention", "allgather", "v5e", "h100", "1|2", "1..64*2", "B"]),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.binary(max_size=6),
    st.text(max_size=8),
    st.sampled_from(
        [pd.NA, pd.NaT, pd.Timestamp(0), np.int8(-3), np.float32("nan"), np.uint64(2**64 - 1),
         Decimal("1e3"), Fraction(1, 3), 1 + 2j, [1, 2], {"a": 1}, (4,), object()]
    ),
)  # fmt: skip
odd_frame_dtype = st.sampled_from([None, "infer", "category", "string", "Int64", "float"])


VALID = {
    "name": st.text("abcdefgh", min_size=4, max_size=8),
    "op": st.just("matmul"),
    "B": st.sampled_from([1, 8, 4096, "1|2", "1..64*2"]),
    "D": st.sampled_from([128, 8192, "128|256"]),
    "F": st.sampled_from([128, 8192]),
    "hardware": st.sampled_from(["v5e", "h100", "tpu-v6e"]),
}


@st.composite
def odd_frames(draw):
    """A DataFrame (or list of dicts) of odd columns, values and dtypes, duplicates allowed:
    often a valid frame's columns with odd cells, odd dtypes and odd extra columns."""
    base = draw(st.sampled_from([[], list(VALID), list(VALID)]))
    columns = base + draw(st.lists(column_name, max_size=2 if base else 8))
    odd_cells = draw(st.booleans())  # else only the extra columns are odd: rows computed
    cell = {c: (st.one_of(VALID[c], odd_value) if odd_cells else VALID[c])
            if c in VALID else odd_value for c in columns if isinstance(c, str)}  # fmt: skip
    row = st.tuples(*(cell.get(c, odd_value) if isinstance(c, str) else odd_value
                      for c in columns)).map(list)  # fmt: skip
    rows = draw(st.lists(row, min_size=1 if base else 0, max_size=4))
    if draw(st.booleans()) and all(isinstance(c, str) for c in columns):
        return [dict(zip(columns, row, strict=True)) for row in rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' deprecations of odd constructions
        frame = pd.DataFrame(rows, columns=columns, dtype=object) if columns else pd.DataFrame()
    how = draw(odd_frame_dtype)
    with suppress(Exception), warnings.catch_warnings():  # a dtype the values do not take
        warnings.simplefilter("ignore")
        if how == "infer":
            frame = frame.infer_objects()
        elif how is not None:
            frame = frame.astype(how)
    return frame


odd_max_rows = st.sampled_from([0, -1, True, 5.0, "5", None, 2**70])
odd_strict = st.sampled_from(["yes", None, 1, np.True_])
odd_name = st.sampled_from([5, b"x", ("a",)])
fine = {
    "max_rows": st.sampled_from([10**6, 1, 3, np.int64(5)]),
    "strict": st.booleans(),
    "name": st.sampled_from(["x", "", "a\x00b", "a\u202eb", "../../etc"]),
}
# mostly fine arguments, so that most examples reach the checks of the rows
arguments = st.one_of(
    st.fixed_dictionaries({}, optional=fine),
    st.fixed_dictionaries({}, optional=fine),
    st.fixed_dictionaries({}, optional=fine),
    st.fixed_dictionaries(
        {}, optional={"max_rows": odd_max_rows, "strict": odd_strict, "name": odd_name}
    ),
)


@API_SETTINGS
@given(source=odd_frames(), kwargs=arguments)
def test_analyze_never_crashes_on_odd_frames_and_arguments(source, kwargs):
    """Odd rows: an Analysis or a PipelineError; odd arguments: a TypeError or ValueError
    naming the argument. Never another exception (KeyError, IndexError, numpy's)."""
    max_rows = kwargs.get("max_rows", 10**6)
    strict, name = kwargs.get("strict", False), kwargs.get("name")
    whole = isinstance(max_rows, Integral) and not isinstance(max_rows, bool)
    fine_arguments = (
        whole and 1 <= max_rows <= MAX_ROWS_LIMIT
        and isinstance(strict, bool) and (name is None or isinstance(name, str))
    )  # fmt: skip
    try:
        a = pipeline.analyze(source, **kwargs)
    except PipelineError as exc:
        assert str(exc)
        event(type(exc).__name__)
        return
    except (TypeError, ValueError) as exc:
        assert not fine_arguments, exc
        assert str(exc).startswith(("max_rows must", "strict must", "name must")), exc
        event(type(exc).__name__)
        return
    assert fine_arguments
    assert isinstance(a, pipeline.Analysis)
    event(f"{a.summary.scenarios > 0} scenarios computed")
    repr(a)
    assert len(a.results) == a.summary.scenarios
    assert len(a.problems) == len(a.problem_list)
    pipeline.charts.planned(a)
    assert isinstance(pipeline.charts.summary(a), Figure)
    if a.summary.scenarios:  # each chart of its first chip: a Figure, or what is missing
        chip = str(a.hardware[0]["name"])
        for chart in (pipeline.charts.roofline, pipeline.charts.network, pipeline.charts.sweep):
            with suppress(PipelineError):
                assert isinstance(chart(a, chip), Figure)


_WRITE_ANALYSIS = pipeline.analyze(
    [{"name": "q", "op": "matmul", "B": 8, "D": 64, "F": 64, "hardware": "v5e"}]
)
odd_value = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 6), st.floats(allow_nan=True),
    st.text(max_size=4), st.binary(max_size=3), st.lists(st.integers(), max_size=2),
)  # fmt: skip
folder_name = st.text(
    st.characters(blacklist_characters="/", blacklist_categories=("Cs",)), max_size=12
).filter(lambda t: t not in (".", ".."))


@API_SETTINGS
@given(
    name=st.one_of(folder_name, odd_value),
    kwargs=st.dictionaries(
        st.sampled_from(
            ["workbook", "report", "force", "max_charts", "workbook_rows", "report_rows",
             "workbook_input_rows", "workers", "protect"]
        ),
        odd_value,
        max_size=3,
    ),
)  # fmt: skip
def test_write_never_crashes_on_odd_arguments(tmp_path_factory, name, kwargs):
    """write()'s arguments as a notebook may pass them: the outputs, or a TypeError /
    ValueError naming the argument, or a PipelineError; never a raw error from deep inside,
    and nothing written when an argument is refused."""
    base = tmp_path_factory.mktemp("write")
    out = base / name if isinstance(name, str) and name else name
    try:
        written = _WRITE_ANALYSIS.write(out, plots=False, **kwargs)
    except (TypeError, ValueError) as exc:
        assert str(exc).split(" ", 1)[0] in ("out_dir", *kwargs), exc
        assert " must " in str(exc), exc
        assert list(base.iterdir()) == []
        event(type(exc).__name__)
        return
    except PipelineError as exc:
        assert str(exc)
        event(type(exc).__name__)
        return
    assert (written.folder / "manifest.json").is_file()
    event("written")
