"""The HTML review report: golden file, escaping, nothing external, table cap, filters, index."""

from __future__ import annotations

import base64
import os
import re
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from pipeline import report
from pipeline.errors import OutputError, PipelineError
from pipeline.hardware import catalog_records
from pipeline.meta import Chart, RunMeta
from pipeline.report import (
    build_report_context,
    environment,
    render_index,
    render_index_html,
    render_report,
    render_report_html,
)
from pipeline.roofline import compute_roofline
from pipeline.scenarios import load_scenarios

GOLDEN = Path(__file__).resolve().parent / "golden" / "report_small.html"
EXTERNAL = ("http://", "https://", 'src="//', "@import", "<link")
HOSTILE = ("<script>alert(1)</script>", '"><img src=x onerror=1>')


def tiny_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour PNG, byte-for-byte stable (stored deflate), for the golden file."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 0))
        + chunk(b"IEND", b"")
    )


def figure_png(path: Path, title: str) -> Path:
    """A small real chart drawn with matplotlib's Figure API (no pyplot)."""
    fig = Figure(figsize=(3, 2), dpi=50)
    ax = fig.subplots()
    ax.loglog([0.1, 240, 1e5], [1e10, 1.97e14, 1.97e14])
    ax.set_title(title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


def fixed_meta(results: pd.DataFrame, **changes) -> RunMeta:
    fields = dict(
        run_name="q1-q5",
        input_path="scenarios/q1-q5.csv",
        input_sha256="ab" * 32,
        started="2026-01-01T00:00:00+00:00",
        tool_version="0.0.0-test",
        catalog_version="catalog-test",
        source_rows=15,
        scenarios=len(results),
        rejected_rows=2,
        notices=("The workbook's Results sheet holds the first 1,000,000 rows.",),
    )
    fields.update(changes)
    return RunMeta(**fields)


@pytest.fixture(scope="module")
def small_run(book_run):
    """The book run without most of the Q3 sweep points, two measurements, two rejected rows."""
    r = book_run.results
    keep = (r["series"] == r["name"]) | r["B"].isin([1, 512]).fillna(False).astype(bool)
    results = r.loc[keep].reset_index(drop=True).copy()
    measured = {"intro_h100_1e12_flops": 1.3e-3, "q4_batched_int8": 2.0e-2}
    seconds = results["name"].map(measured).astype(float)
    results["measured_seconds"] = seconds
    results["measured_over_predicted"] = seconds / results["t_lower"]
    errors = pd.DataFrame(
        {
            "line": [17, 18],
            "name": ["typo_chip", "bad_dim"],
            "column": ["hardware", "B"],
            "reason": [
                "unknown hardware 'h10' (did you mean 'h100'?)",
                "'-4' is not a positive integer or a sweep (e.g. 128, 1..512, 1..4096*2)",
            ],
        }
    )
    return results, errors, book_run.hardware


def golden_charts(run_dir: Path, hardware: list[dict]) -> list[Chart]:
    charts = []
    for i, rec in enumerate(hardware):
        path = f"plots/roofline-{rec['name']}.png"
        (run_dir / path).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / path).write_bytes(tiny_png(4, 3, (30 * i, 120, 200)))
        charts.append(Chart("roofline", f"Roofline: {rec['name']}", path, hardware=rec["name"]))
    (run_dir / "plots/sweep-q3.png").write_bytes(tiny_png(6, 2, (250, 140, 40)))
    charts.append(
        Chart(
            "sweep",
            "Attainable FLOP/s vs B on tpu-v5e",
            "plots/sweep-q3.png",
            hardware="tpu-v5e",
            series=("q3_D4096", "q3_D1024"),
        )
    )
    return charts


def test_golden_small_run(small_run, tmp_path):
    results, errors, hardware = small_run
    charts = golden_charts(tmp_path, hardware)
    html = render_report_html(
        fixed_meta(results), results, errors, hardware, charts, tmp_path, max_table_rows=10
    )
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(html, encoding="utf-8", newline="\n")
    assert html == GOLDEN.read_text(encoding="utf-8"), (
        "report changed; if on purpose, rerun with UPDATE_GOLDEN=1 and review the diff"
    )


def test_golden_content_order_and_numbers(small_run, tmp_path):
    """The golden file's facts a reviewer relies on, in the order issue 5 lists them."""
    results, errors, hardware = small_run
    html = render_report_html(
        fixed_meta(results),
        results,
        errors,
        hardware,
        golden_charts(tmp_path, hardware),
        tmp_path,
        max_table_rows=10,
    )
    order = [
        "ab" * 32,
        'id="summary"',
        "compute-bound",
        "Compute- vs communication-bound, per hardware",
        'id="hw-1-h100"',
        'id="hw-2-tpu-v5e"',
        'id="sweeps"',
        'id="findings"',
        'id="method"',
        'id="rejected"',
    ]
    positions = [html.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "1.01 ms" in html  # intro: 1e12 FLOPs on an H100
    assert "197 TFLOP/s" in html and "16.0 GB" in html and "820 GB/s" in html
    assert "B=512 D=65536 F=65536" in html
    assert "bf16 \u00d7 int8 \u2192 bf16" in html
    assert "2 more rows in results.csv." in html  # tpu-v5e: 12 rows, cap 10
    assert "The tpu-v5e table shows the first 10 of 12 scenarios" in html
    assert "The workbook&#39;s Results sheet" in html  # meta.notices shown, escaped
    assert "3.82\u00d7" in html  # q4: measured 20 ms / predicted 5.24 ms
    assert "unknown hardware &#39;h10&#39; (did you mean &#39;h100&#39;?)" in html
    assert html.count("data:image/png;base64,") == len(hardware) + 1


class _TagChecker(HTMLParser):
    """Fails on a closing tag that does not match the innermost open one."""

    VOID = {"meta", "img", "br", "hr", "input", "link", "col", "wbr", "source"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:], self.getpos())
        self.stack.pop()


def assert_well_formed(html: str) -> None:
    checker = _TagChecker()
    checker.feed(html)
    checker.close()
    assert checker.stack == []


def test_report_markup_is_balanced(small_run, tmp_path):
    results, errors, hardware = small_run
    charts = golden_charts(tmp_path, hardware)
    meta = fixed_meta(results)
    assert_well_formed(render_report_html(meta, results, errors, hardware, charts, tmp_path))
    assert_well_formed(render_index_html(INDEX_RUNS))


def test_report_references_nothing_external(small_run, tmp_path):
    results, errors, hardware = small_run
    figure_png(tmp_path / "plots/r.png", "v5e")
    charts = [Chart("roofline", "Roofline: tpu-v5e", "plots/r.png", "tpu-v5e")]
    html = render_report_html(
        fixed_meta(results), results, errors, hardware, charts, tmp_path, max_table_rows=3
    )
    for needle in EXTERNAL:
        assert needle not in html, needle
    for ref in re.findall(r'(?:src|href)="([^"]*)"', html):
        assert ref.startswith(("#", "data:image/png;base64,")), ref
    assert "url(" not in html


def test_charts_are_embedded_and_placed(small_run, tmp_path):
    results, errors, hardware = small_run
    roof = figure_png(tmp_path / "plots/roofline-tpu-v5e.png", "Roofline tpu-v5e")
    sweep = figure_png(tmp_path / "plots/sweep.png", "Q3")
    summary = figure_png(tmp_path / "plots/summary.png", "all chips")
    charts = [
        Chart("summary", "All chips", "plots/summary.png"),
        Chart("roofline", "Roofline: tpu-v5e", "plots/roofline-tpu-v5e.png", "tpu-v5e"),
        Chart("sweep", "Q3 sweep", "plots/sweep.png", "tpu-v5e", ("q3_D4096", "q3_D1024")),
    ]
    html = render_report_html(fixed_meta(results), results, errors, hardware, charts, tmp_path)
    payloads = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert [base64.b64decode(p) for p in payloads] == [
        summary.read_bytes(),
        roof.read_bytes(),
        sweep.read_bytes(),
    ]
    v5e = html.index('id="hw-2-tpu-v5e"')
    assert v5e < html.index('alt="Roofline: tpu-v5e"') < html.index('id="hw-3-tpu-v6e"')
    sweeps = html[html.index('id="sweeps"') : html.index('id="findings"')]
    assert 'alt="Q3 sweep"' in sweeps and "q3_D4096" in sweeps and "q3_D1024" in sweeps


def test_missing_or_bad_chart_is_an_output_error(small_run, tmp_path):
    results, errors, hardware = small_run
    missing = [Chart("roofline", "gone", "plots/gone.png", "tpu-v5e")]
    with pytest.raises(OutputError, match="gone"):
        render_report_html(fixed_meta(results), results, errors, hardware, missing, tmp_path)
    (tmp_path / "fake.png").write_text("not a png")
    fake = [Chart("roofline", "fake", "fake.png", "tpu-v5e")]
    with pytest.raises(OutputError, match="not a PNG"):
        render_report_html(fixed_meta(results), results, errors, hardware, fake, tmp_path)


def test_hostile_names_are_escaped(small_run, tmp_path):
    results, errors, hardware = small_run
    results = results.copy()
    results.loc[0, "name"] = HOSTILE[0]
    results.loc[1, "name"] = HOSTILE[1]
    results.loc[2, "notes"] = HOSTILE[1]
    results.loc[3, "series"] = HOSTILE[0]
    errors = errors.assign(name=list(HOSTILE), reason=list(reversed(HOSTILE)))
    hardware = [dict(rec) for rec in hardware]
    hardware[0]["source"] = HOSTILE[0]
    hardware[0]["aliases"] = HOSTILE[1]
    (tmp_path / "c.png").write_bytes(tiny_png(2, 2, (0, 0, 0)))
    charts = [Chart("roofline", HOSTILE[1], "c.png", hardware[0]["name"])]
    meta = fixed_meta(results, run_name=HOSTILE[0], input_path=HOSTILE[1], notices=HOSTILE)
    html = render_report_html(meta, results, errors, hardware, charts, tmp_path)
    for text in HOSTILE:
        assert text not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=1&gt;" in html
    assert "<img src=x" not in html and "<script>alert" not in html
    assert html.count("<script>") == 1  # only the table sorter


def test_html_ids_are_safe_for_any_chip_name(small_run, tmp_path):
    results, errors, hardware = small_run
    hardware_col = results["hardware"].astype(object)  # a categorical takes no new names
    results = results.assign(hardware=hardware_col.replace("h100", HOSTILE[1]))
    html = render_report_html(fixed_meta(results), results, errors, hardware, [], tmp_path)
    ids = re.findall(r'id="([^"]*)"', html)
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in ids), ids
    assert len(ids) == len(set(ids))


@pytest.fixture(scope="module")
def big_run(catalog, tmp_path_factory):
    """20,000 scenarios on four chips; the tpu-v5e sweep does not fit in HBM."""
    csv = tmp_path_factory.mktemp("big") / "big.csv"
    csv.write_text(
        "name,op,B,D,F,hardware\n"
        "fit_v5p,matmul,1..5000,4096,4096,v5p\n"
        "fit_h100,matmul,1..5000,4096,4096,h100\n"
        "fit_v6e,matmul,1..5000,8192,8192,v6e\n"
        "huge_v5e,matmul,1..5000,98304,98304,v5e\n",
        encoding="utf-8",
    )
    loaded = load_scenarios(csv, catalog)
    results = compute_roofline(loaded.frame)
    hardware = catalog_records(catalog, sorted(results["hardware"].unique()))
    return results, hardware


def test_table_cap_keeps_a_big_run_small(big_run, tmp_path):
    results, hardware = big_run
    assert len(results) == 20_000
    errors = pd.DataFrame(columns=["line", "name", "column", "reason"])
    meta = fixed_meta(results, source_rows=4, rejected_rows=0, notices=())
    path = tmp_path / "report.html"
    notices = render_report(path, meta, results, errors, hardware, [], tmp_path)
    html = path.read_text(encoding="utf-8")
    assert path.stat().st_size < 5_000_000
    assert len(notices) == 4
    assert notices[0] == (
        "The h100 table shows the first 500 of 5,000 scenarios; the other 4,500 are in results.csv."
    )
    assert html.count("4,500 more rows in results.csv.") == 4
    for notice in notices:
        assert notice in html
    tables = re.findall(r'<table class="sortable wide rows">(.*?)</table>', html, re.S)
    assert [t.count("<tr>") for t in tables] == [501] * 4  # header + the first 500 rows
    assert "Not fitting in HBM: 5,000 scenarios" in html
    assert "and 4,999 more of series huge_v5e" in html


def test_table_cap_is_configurable(big_run, tmp_path):
    results, hardware = big_run
    errors = pd.DataFrame(columns=["line", "name", "column", "reason"])
    meta = fixed_meta(results, notices=())
    small = render_report_html(meta, results, errors, hardware, [], tmp_path, max_table_rows=20)
    assert small.count("4,980 more rows in results.csv.") == 4
    assert len(small) < 200_000


def test_strict_undefined_catches_a_missing_variable(small_run, tmp_path):
    results, errors, hardware = small_run
    context, _ = build_report_context(fixed_meta(results), results, errors, hardware, [], tmp_path)
    template = environment().get_template(report.REPORT_TEMPLATE)
    template.render(**context)  # complete: fine
    incomplete = {k: v for k, v in context.items() if k != "findings"}
    with pytest.raises(jinja2.UndefinedError, match="findings"):
        template.render(**incomplete)
    row = dict(context["chips"][0]["rows"][0])
    del row["bound"]
    chips = [{**context["chips"][0], "rows": [row]}]
    with pytest.raises(jinja2.UndefinedError, match="bound"):
        template.render(**{**context, "chips": chips})


def test_environment_autoescapes_and_is_strict():
    env = environment()
    assert env is environment()
    assert env.undefined is jinja2.StrictUndefined
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_missing_templates_are_a_pipeline_error(monkeypatch, tmp_path):
    monkeypatch.setattr(report, "template_dirs", lambda: [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(PipelineError, match="report templates not found"):
        report.find_template_dir()


def test_template_dir_is_the_top_level_templates_folder():
    root = Path(__file__).resolve().parent.parent
    assert report.find_template_dir() == root / "templates"


@pytest.mark.parametrize(
    ("name", "value", "text"),
    [
        ("seconds", 1.011e-3, "1.01 ms"),
        ("seconds", 5.24e-3, "5.24 ms"),
        ("seconds", 2.05e-5, "20.5 \u00b5s"),
        ("seconds", 1.02e-8, "10.2 ns"),
        ("seconds", 1.5, "1.50 s"),
        ("seconds", 0.0, "0 s"),
        ("seconds", 0.9996, "1.00 s"),
        ("seconds", float("nan"), "\u2014"),
        ("seconds", None, "\u2014"),
        ("flop_rate", 1.97e14, "197 TFLOP/s"),
        ("flop_rate", 1.979e15, "1.98 PFLOP/s"),
        ("flop_rate", 9.997e11, "1.00 TFLOP/s"),
        ("flops", 2.061584e12, "2.06 TFLOP"),
        ("bytes", 1.6e10, "16.0 GB"),
        ("bytes", 8.0e10, "80.0 GB"),
        ("bytes", 512, "512 B"),
        ("bytes", 1e6, "1.00 MB"),
        ("bandwidth", 8.2e11, "820 GB/s"),
        ("bandwidth", 3.35e12, "3.35 TB/s"),
        ("percent", 0.64637, "64.6%"),
        ("percent", 1.0, "100%"),
        ("percent", 0, "0%"),
        ("percent", None, "\u2014"),
        ("num", 238.254968, "238"),
        ("num", 4377.8, "4,378"),
        ("num", 0.5, "0.500"),
        ("num", 0.00208, "0.00208"),
        ("num", 2.0, "2.00"),
        ("num", 1e6, "1,000,000"),
        ("count", 1035, "1,035"),
        ("count", pd.NA, "\u2014"),
        ("ratio", 3.8168, "3.82\u00d7"),
        ("ratio", float("inf"), "\u221e\u00d7"),
        ("when", "2026-01-01T00:00:00+00:00", "2026-01-01 00:00:00 UTC"),
        ("when", "yesterday", "yesterday"),
        ("sortkey", 0.0010111223458, "0.0010111"),
        ("sortkey", float("nan"), ""),
    ],
)
def test_filters_format_for_people(name, value, text):
    assert environment().filters[name](value) == text


def test_filters_work_in_templates():
    env = environment()
    out = env.from_string("{{ t|seconds }} | {{ p|flop_rate }} | {{ b|bytes }}").render(
        t=1.011e-3, p=1.97e14, b=1.6e10
    )
    assert out == "1.01 ms | 197 TFLOP/s | 16.0 GB"


def test_report_is_deterministic(small_run, tmp_path):
    results, errors, hardware = small_run
    charts = golden_charts(tmp_path, hardware)
    args = (fixed_meta(results), results, errors, hardware, charts, tmp_path)
    assert render_report_html(*args) == render_report_html(*args)


def test_empty_errors_and_no_measurements(book_run, tmp_path):
    meta = fixed_meta(book_run.results, rejected_rows=0, notices=())
    html = render_report_html(
        meta, book_run.results, book_run.errors, book_run.hardware, [], tmp_path
    )
    assert "None: every input row was valid." in html
    assert "No measured_seconds were given." in html
    assert 'id="sweeps"' not in html  # no sweep charts given
    assert "No chart for this hardware in this run." in html


INDEX_RUNS = [
    {
        "run_name": "q1-q5",
        "input_path": "scenarios/q1-q5.csv",
        "report_href": "q1-q5/report.html",
        "scenarios": 1035,
        "compute": 669,
        "memory": 365,
        "network": 1,
        "not_fitting": 0,
        "rejected": 0,
        "status": "ok",
    },
    {
        "run_name": HOSTILE[0],
        "input_path": HOSTILE[1],
        "report_href": "bad run/report.html",
        "scenarios": 10,
        "compute": 2,
        "memory": 3,
        "network": 5,
        "not_fitting": 1,
        "rejected": 4,
        "status": "rows rejected",
    },
]


def test_index_page_links_each_report_with_counts(tmp_path):
    path = render_index(tmp_path / "index.html", INDEX_RUNS)
    html = path.read_text(encoding="utf-8")
    assert '<a href="q1-q5/report.html">q1-q5</a>' in html
    assert 'href="bad%20run/report.html"' in html
    assert "1,035" in html and "366" in html and "(35.4%)" in html  # communication = 365 + 1
    assert "1,045" in html  # total scenarios
    for text in HOSTILE:
        assert text not in html
    for needle in EXTERNAL:
        assert needle not in html


@pytest.mark.parametrize("href", ["https://example.com/r.html", "/abs/report.html", "//x/r"])
def test_index_refuses_links_that_leave_the_output_folder(href):
    runs = [{**INDEX_RUNS[0], "report_href": href}]
    with pytest.raises(PipelineError, match="relative path"):
        render_index_html(runs)


def test_index_entry_missing_a_field_is_an_error():
    run = {k: v for k, v in INDEX_RUNS[0].items() if k != "status"}
    with pytest.raises(PipelineError, match="status"):
        render_index_html([run])


def test_records_hold_plain_python_values(small_run, tmp_path):
    results, errors, hardware = small_run
    context, _ = build_report_context(fixed_meta(results), results, errors, hardware, [], tmp_path)
    row = context["chips"][1]["rows"][0]
    plain = (str, int, float, bool, type(None))
    assert all(isinstance(v, plain) for v in row.values()), row
    assert not any(isinstance(v, (pd.DataFrame, pd.Series, np.ndarray)) for v in context.values())


def test_worst_per_series_is_the_stable_sort_and_first_per_series():
    """Against the plain pandas statement of it, with ties, NaN and repeated series."""
    rng = np.random.default_rng(7)
    n = 2_000
    table = pd.DataFrame(
        {
            "series": rng.choice([f"s{i}" for i in range(300)], n),
            "value": np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 50, n).astype(float)),
        },
        index=rng.permutation(n) + 10,  # a subset's own index, as in the findings
    )
    sizes = table.groupby("series")["series"].transform("size")
    expected = (
        table.assign(in_series=sizes)
        .sort_values("value", ascending=False, kind="stable")
        .drop_duplicates("series")
        .head(25)
    )
    codes = pd.Series(pd.factorize(table["series"])[0], index=table.index)
    got = report._worst_per_series(table, "value", 25, codes)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    assert report._worst_per_series(table.iloc[:0], "value", 25, codes).empty
