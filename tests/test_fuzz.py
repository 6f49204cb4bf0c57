"""Property-based fuzzing of the command line: whatever a user writes in a dim cell, a sweep,
a hardware cell or a hardware file, the tool answers with a message and an exit code (0, 1
or 2), never a traceback, and within bounded memory."""

from __future__ import annotations

import csv
import io
import os
import tracemalloc

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.cli import cli

MEMORY_LIMIT = 200e6  # bytes traced per example (numpy and Python), at --max-rows 20000
SETTINGS = settings(  # make soak sets FUZZ_EXAMPLES=1000
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "50")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

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
            f'[{_toml_key(name)}]\naliases = "{_toml_str(aliases)}"\n'
            f'hbm_bandwidth = "{_toml_str(bandwidth)}"\npeak_bf16 = "{_toml_str(peak)}"\n'
            f'default_link = "{_toml_str(link)}"\nici_topology = "{_toml_str(topology)}"\n'
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


def _toml_str(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _toml_key(text: str) -> str:
    return f'"{_toml_str(text)}"'
