"""What the tool promises, round four (issue 39): what the outputs show. Bidi controls made
visible in the report, the index and on charts; a fleet chart's lines capped, the rest said;
the fleet sentence with ties and points that do not fit; reports that agree with themselves;
the nightly pages (the index's "Since the baseline" column, a swept series' estimate)."""

from __future__ import annotations

import re

import openpyxl
import pytest
from matplotlib.text import Text

import pipeline
from pipeline.errors import printable
from pipeline.render.charts import fleet_data
from pipeline.render.charts.labels import chart_text
from pipeline.render.report.index_page import render_index
from pipeline.render.report.page import render_report
from pipeline.render.text.fleet import first_sentences
from tests.helpers import HEAD, ROOT, invoke, measured_rows, sheet_text, write_scenarios

BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
TRICK = "mm\u202etxt.exe"  # reads 'mmexe.txt' where the override is obeyed
NOTE = "note \u2066rtl\u2069 \u200fmark"


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text)]


# ---------------------------------------------------------------- bidi controls, visible


def test_bidi_controls_in_names_and_notes_are_escaped_in_the_report():
    a = pipeline.analyze(
        [
            {"name": TRICK, "op": "matmul", "B": 256, "D": 4096, "F": 4096,
             "hardware": "v5e", "notes": NOTE},
            {"name": "sw\u202dx", "op": "matmul", "B": "1..64*2", "D": 4096, "F": 4096,
             "hardware": "v5e|h100", "notes": NOTE},
        ]
    )  # fmt: skip
    html = render_report(a, "run")
    assert not BIDI.search(html), BIDI.findall(html)
    # the terminal's escape (pipeline.errors.printable), the same text
    assert printable(TRICK) == "mm\\u202etxt.exe" and printable(TRICK) in html
    assert printable(NOTE) in html and "sw\\u202dx" in html


def test_bidi_controls_are_escaped_on_the_index_page():
    run = {"run_name": "r\u202eun", "input_path": "in\u2067put.csv", "report_href": "r/report.html",
           "scenarios": 1, "compute": 0, "memory": 1, "network": 0, "not_fitting": 0,
           "rejected": 0, "status": "ok"}  # fmt: skip
    html = render_index([run])
    assert not BIDI.search(html)
    assert "r\\u202eun" in html and "in\\u2067put.csv" in html


def test_bidi_controls_are_escaped_on_charts():
    assert chart_text(TRICK) == "mm\\u202etxt.exe"
    assert chart_text("a\nb\tc") == "a b c"  # line breaks stay spaces on a chart
    a = pipeline.analyze(
        [{"name": TRICK, "op": "matmul", "B": "1..64*2", "D": 4096, "F": 4096,
          "hardware": "h100|h200"}]
    )  # fmt: skip
    for fig in (pipeline.charts.fleet(a, TRICK), pipeline.charts.sweep(a, "h100")):
        texts = _texts(fig)
        assert not any(BIDI.search(t) for t in texts), texts
        assert any("mm\\u202etxt.exe" in t for t in texts), texts


# ---------------------------------------------------------------- a fleet chart, bounded

CHIPS = ("tpu-v4p|tpu-v5e|tpu-v5p|tpu-v6e|tpu7x|a100|h100|h200|b200|gb200|l40s|h20|gh200|"
         "b300|gb300|mi300x|mi325x|mi355x|mi350x|gaudi3")  # fmt: skip


@pytest.fixture(scope="module")
def big_fleet():
    """One fleet series of 80 points (20 chips x 4 chip counts) over a short B sweep."""
    return pipeline.analyze(
        [{"name": "big", "op": "matmul", "B": "1|2|4", "D": 8192, "F": 28672,
          "hardware": CHIPS, "chips": "1|2|4|8", "shard": "D"}]
    )  # fmt: skip


def test_a_fleet_chart_of_many_points_draws_the_fastest_and_says_the_rest(big_fleet):
    points = big_fleet.summary.fleet.drop_duplicates(["hardware", "chips"])
    assert len(points) == 80
    fig = pipeline.charts.fleet(big_fleet, "big")
    drawn = [ln for ln in fig.axes[0].get_lines() if ln.get_label()[:1].isdigit()]
    assert len(drawn) == fleet_data.FLEET_LINES == 30
    assert fig.get_size_inches()[1] * fig.dpi <= 1800  # bounded, however many points
    said = [t for t in _texts(fig) if "50 more" in t]
    assert said and "Fleet sheet" in said[0], _texts(fig)


def test_a_fleet_chart_keeps_the_fastest_point_that_fits(monkeypatch):
    # 200 GB of bf16 weights: gb200 (186 GB) and b200 (180 GB) are faster and do not fit
    monkeypatch.setattr(fleet_data, "FLEET_LINES", 2)
    rows = [{"name": "f", "op": "matmul", "B": "4096|8192", "D": 316228, "F": 316228,
             "hardware": "gb200|b200|h100|b300"}]  # fmt: skip
    fig = pipeline.charts.fleet(pipeline.analyze(rows), "f")
    drawn = [ln.get_label() for ln in fig.axes[0].get_lines() if ln.get_label()[:1].isdigit()]
    assert [d.split()[1] for d in drawn] == ["gb200", "b300"], drawn
    assert any("… and 2 more fleet points" in t for t in _texts(fig))


# ---------------------------------------------------------------- the fleet sentence

TIE = {
    "name": "tie",
    "op": "matmul",
    "B": 8192,
    "D": 8192,
    "F": 8192,
    "hardware": "h100|gh200|h200|a100",
}  # compute-bound on three chips of one peak
UNFIT = {
    "name": "unfit",
    "op": "matmul",
    "B": 8192,
    "D": 316228,
    "F": 316228,
    "hardware": "gb200|b300|h100",
}  # 200 GB of weights: gb200 (186 GB) the fastest
NONE = {"name": "none", "op": "matmul", "B": 8192, "D": 416228, "F": 416228,
        "hardware": "gb200|b300"}  # fmt: skip


@pytest.fixture(scope="module")
def sentences():
    a = pipeline.analyze([TIE, UNFIT, NONE])
    return a, dict(first_sentences(a.summary.fleet))


def test_an_exact_tie_is_said_as_a_tie_and_ranked_as_one(sentences):
    a, said = sentences
    assert said["tie"].startswith("h100, gh200 and h200 tie as the fastest, 1.11 ms"), said
    assert said["tie"].endswith("; a100 is 3.17× slower."), said["tie"]
    tie = a.summary.fleet[a.summary.fleet["series"] == "tie"]
    assert tie["rank"].tolist() == [1, 1, 1, 4]  # equal times share a rank


def test_a_fastest_point_that_does_not_fit_is_not_the_answer(sentences):
    _, said = sentences
    text = said["unfit"]
    assert text.startswith("The fastest that fits in HBM is b300, 728 ms (compute-bound)"), text
    assert "gb200 is faster (655 ms) but does not fit in HBM" in text
    # than the answer, b300; and h100 (80 GB) does not fit either
    assert text.endswith("; h100 is 2.28× slower; h100 does not fit in HBM."), text


def test_no_point_fitting_is_said(sentences):
    _, said = sentences
    assert said["none"].startswith("No fleet point fits in HBM; the fastest, gb200, would take"), (
        said
    )
    assert "fastest is" not in said["none"]


# ---------------------------------------------------------------- reports agree with themselves


def _text(html: str) -> str:
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    return re.sub(r" ([:;,.)])", r"\1", text)


def test_the_communication_finding_says_the_collectives_it_counts_apart(tmp_path):
    text = (ROOT / "scenarios" / "measured.csv").read_text(encoding="utf-8")
    book = "".join(ln for ln in text.splitlines(True) if not ln.startswith("h100/gemm/"))
    a = pipeline.analyze(write_scenarios(tmp_path, book))  # the book's: 2 custom, 3 AllGathers
    text = _text(render_report(a, "measured"))
    assert "3 network-bound" in text  # the tiles count the collectives' series
    assert ("Communication-bound (memory- or network-bound, the book's term): 2 scenarios (2 "
            "memory, 0 network; 3 collective rows, network-bound by nature, counted apart) in 2 "
            "series") in text  # fmt: skip


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    """A calibration of h100 matmul and custom rows (tests.helpers.measured_rows)."""
    path = tmp_path_factory.mktemp("cal") / "cal.toml"
    pipeline.calibrate(measured_rows(30), path)  # 25 rows a group at least
    return path


def test_a_calibration_warning_is_not_a_warning_about_the_input(calibration, tmp_path):
    rows = [{"name": "x", "op": "matmul", "B": 8, "D": 1024, "F": 1024, "hardware": "v5e"}]
    a = pipeline.analyze(rows, calibration=calibration)  # fits no chip of this run
    assert any("gives no row an estimate" in w for w in a.warnings)
    html = render_report(a, "run")
    assert "Warnings about the input" not in html
    text = _text(html)
    assert "Warning about the calibration No estimate: calibration" in text
    a.write(tmp_path / "out", plots=False, report=False)
    sheet = openpyxl.load_workbook(tmp_path / "out" / "workbook.xlsx")["Summary"]
    cells = sheet_text(sheet)
    assert "Warnings about the input" not in cells
    said = cells.index("Warning about the calibration")
    assert "gives no row an estimate" in cells[said + 1]


def test_measured_times_are_compared_with_the_floor_when_the_calibration_gives_none(
    calibration,
):
    """make run's measured report: a calibration that fits none of the run's chips gives no
    estimate, so its measured finding compares with t_lower, not 'the calibrated estimate'."""
    rows = [{"name": "x", "op": "matmul", "B": 8, "D": 1024, "F": 1024, "hardware": "v5e",
             "measured_seconds": 1e-3}]  # fmt: skip
    text = _text(render_report(pipeline.analyze(rows, calibration=calibration), "run"))
    assert "of t_lower" in text and "the calibrated estimate" not in text


def test_the_index_header_names_the_bounds_alike():
    html = render_index([dict(RUN)])
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", html.split("<tbody>")[0])
    assert heads[3:7] == ["Compute-bound", "Communication-bound", "Memory-bound", "Network-bound"]


# ---------------------------------------------------------------- nightly pages

RUN = {"run_name": "q1-q5", "input_path": "s2/q1-q5.csv", "report_href": "q1-q5/report.html",
       "scenarios": 1035, "compute": 511, "memory": 524, "network": 0, "not_fitting": 0,
       "rejected": 0, "status": "ok"}  # fmt: skip


def test_since_the_baseline_says_the_kinds_that_changed_and_wraps():
    counts = {"bound": 160, "fits": 0, "critical_batch": 0, "t_lower": 2060, "added": 0,
              "removed": 0}  # fmt: skip
    html = render_index([{**RUN, "changes": {"total": 2220, "counts": counts}}])
    cell = re.search(r'<td class="since">(.*?)</td>', html)
    assert cell, html
    assert cell.group(1) == "2,220 changes: 160 bound flips, 2,060 time changes"
    assert "white-space: nowrap" not in re.search(r"td\.since \{[^}]*\}", html).group(0)


def test_a_swept_series_whose_estimate_went_away_says_its_range(calibration, tmp_path):
    rows = [{"name": "sw", "op": "matmul", "B": "1..64*2", "D": 4096, "F": 8192,
             "hardware": "h100"}]  # fmt: skip
    pipeline.analyze(rows, calibration=calibration).write(tmp_path / "a", plots=False)
    b = pipeline.analyze(rows)
    b.write(tmp_path / "b", plots=False, baseline=tmp_path / "a")
    text = _text((tmp_path / "b" / "report.html").read_text(encoding="utf-8"))
    assert "estimate —" not in text
    assert re.search(r"estimate \d+\.?\d* µs – \d+\.?\d* µs → none", text), text


# ---------------------------------------------------------------- the fleet answer, fitting said

# llama3-70b in bf16 (140 GB of weights): h100 and h200 fit at no B; b200 and mi300x fit at
# B = 1, 4 and 16 and not at 64 or 256 (the KV cache grows with B)
NOT_FITTING = {"name": "f", "op": "transformer", "model": "llama3-70b",
               "hardware": "h100|h200|b200|mi300x", "dtype": "bf16", "B": "1..256*4", "T": 1,
               "S": 4096}  # fmt: skip
FITTING = {"name": "small", "op": "matmul", "B": "1..64*4", "D": 1024, "F": 1024,
           "hardware": "h100|b200"}  # fmt: skip


@pytest.fixture(scope="module")
def not_fitting():
    return pipeline.analyze([NOT_FITTING, FITTING])


def test_the_fleet_sentence_says_the_ranked_points_that_do_not_fit_there(not_fitting):
    said = dict(first_sentences(not_fitting.summary.fleet))
    assert said["f"] == (
        "At B = 1 the fastest is b200, 18.2 ms (memory-bound); mi300x is 1.45× slower, h100 "
        "(the slowest of 4) 2.30×; h200 and h100 do not fit in HBM at B = 1."
    )
    assert "fit in HBM" not in said["small"]  # every point fits: nothing to say


def test_the_fleet_sentence_says_one_point_that_does_not_fit():
    from pipeline.render.text.fleet import point_labels, sentence

    ranking = pipeline.analyze([NOT_FITTING]).summary.fleet
    one = ranking[(ranking["at"] == "B=1") & (ranking["hardware"] != "h200")].copy()
    one["label"] = point_labels(one)
    assert sentence(one).endswith(
        "h100 (the slowest of 3) 2.30×; h100 does not fit in HBM at B = 1."
    )


def test_the_ranking_says_where_each_fleet_point_fits(not_fitting):
    ranking = not_fitting.summary.fleet
    fits = ranking.drop_duplicates(["series", "hardware"]).set_index(["series", "hardware"])
    assert fits.loc[("f", "b200"), "fits_where"] == "up_to"
    assert fits.loc[("f", "b200"), "fits_up_to"] == "B=16"
    assert fits.loc[("f", "mi300x"), "fits_up_to"] == "B=16"
    assert fits.loc[("f", "h100"), "fits_where"] == "none"
    assert fits.loc[("f", "h200"), "fits_up_to"] == ""
    assert fits.loc[("small", "h100"), "fits_where"] == "all"


def _fleet_table(html: str, series: str) -> dict[str, str]:
    """The report's fleet table of `series` as {fleet point: its Fits in HBM cell}."""
    block = html.split(f"<h3>{series}:</h3>")[1].split("</table>")[0]
    cells = {}
    for row in re.findall(r"<tr><td class=\"nw\">(.*?)</tr>", block):
        texts = [_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", "<td>" + row)]
        cells[texts[0]] = texts[-1]
    return cells


def test_the_fits_column_says_over_what_in_the_report(not_fitting):
    html = render_report(not_fitting, "run")
    # model steps: their largest batch that fits (max_batch, issue 43), not the swept ones'
    assert _fleet_table(html, "f") == {"b200": "up to B = 28", "mi300x": "up to B = 37",
                                       "h200": "at no batch", "h100": "at no batch"}  # fmt: skip
    assert set(_fleet_table(html, "small").values()) == {"at every point"}
    assert "Fits in HBM: for model steps, the largest batch that fits" in _text(html)
    assert "else over the points of its sweep shown" in _text(html)


def test_the_fits_column_says_over_what_in_the_workbook(not_fitting, tmp_path):
    not_fitting.write(tmp_path / "out", plots=False, report=False)
    sheet = openpyxl.load_workbook(tmp_path / "out" / "workbook.xlsx")["Fleet"]
    rows = [[c for c in row if c is not None] for row in sheet.iter_rows(values_only=True)]
    start = next(i for i, r in enumerate(rows) if r == ["f"])
    end = next(i for i, r in enumerate(rows) if r == ["small"])
    last = {
        r[0]: r[-1] for r in rows[start:end] if r and r[0] in ("b200", "mi300x", "h100", "h200")
    }
    assert last == {"b200": "up to B = 28", "mi300x": "up to B = 37", "h200": "at no batch",
                    "h100": "at no batch"}  # fmt: skip
    assert {r[-1] for r in rows[end:] if r and r[0] in ("b200", "h100")} == {"at every point"}
    cells = sheet_text(sheet)
    assert any(c.startswith("fits in HBM: for model steps, the largest batch") for c in cells)
    said = [c for c in cells if c.startswith("At B = 1 the fastest is b200")]
    assert said and said[0].endswith("h200 and h100 do not fit in HBM at B = 1."), said


def test_the_fits_column_and_the_sentence_in_korean(not_fitting):
    from pipeline.i18n import use_lang

    with use_lang("ko"):
        said = dict(first_sentences(not_fitting.summary.fleet))
        html = render_report(not_fitting, "run")
    assert said["f"].endswith("h200, h100: B = 1에서 HBM에 맞지 않음."), said["f"]
    table = _fleet_table(html, "f")
    assert table["b200"] == "B = 28까지" and table["h100"] == "어떤 배치에서도 맞지 않음"


def test_the_fleet_chart_says_its_hollow_marks_are_at_ranked_points(not_fitting):
    texts = _texts(pipeline.charts.fleet(not_fitting, "f"))
    assert "does not fit in HBM at a ranked point" in texts, texts
    assert any(t.endswith("h200 and h100 do not fit in HBM at B = 1.") for t in texts), texts


# ---------------------------------------------------------------- last reviews (issue 39)


def test_a_typo_column_with_a_space_is_offered_names_a_user_can_type(tmp_path):
    """`byte s`: the user_ name has no space (`user_byte_s`), --keep-column quotes it for a
    shell; the Korean message says the same names."""
    from pipeline.errors import ScenarioFileError
    from pipeline.i18n import use_lang

    src = tmp_path / "s.csv"
    src.write_text("name,op,hardware,Byte s,x-dtype\na,dot_product,h100,1,2\n")
    for lang in ("en", "ko"):
        with use_lang(lang), pytest.raises(ScenarioFileError) as e:
            pipeline.analyze(src)
        said = str(e.value)
        assert "user_Byte_s" in said and "user_x_dtype" in said, said
        assert "--keep-column 'Byte s'" in said and "--keep-column x-dtype " in said, said
        assert "user_byte s" not in said.lower() and "--keep-column byte s" not in said, said
    # the names offered are taken
    src.write_text("name,op,hardware,user_Byte_s\na,dot_product,h100,1\n")
    assert "user_byte_s" in pipeline.analyze(src).results.columns
    src.write_text("name,op,hardware,Byte s\na,dot_product,h100,1\n")
    assert "byte s" in pipeline.analyze(src, keep_columns="Byte s").results.columns


def test_the_dask_engines_command_line_messages_are_in_korean(tmp_path):
    """The Dask run's messages pass through the catalog: --baseline with --engine dask, an
    option for dask only, --sheet on a CSV, and the wait for a worker."""
    from pipeline.cli.progress import partitions as _progress
    from pipeline.i18n import use_lang

    path = write_scenarios(tmp_path, f"{HEAD}\nx,matmul,8,8,8,v5e\n")
    out = str(tmp_path / "out")
    for args in (
        ("--engine", "dask", "--baseline", "latest"),
        ("--csv",),
        ("--scheduler", "tcp://h:8786", "--partition-rows", "9"),
        ("--sheet", "A"),
    ):
        said = invoke("run", path, "-o", out, "--lang", "ko", *args)  # fmt: skip
        assert said.exit_code == 2, said.stderr
        line = said.stderr.strip().splitlines()[-1]
        assert line.startswith("오류: ") and re.search("[가-힣]", line[4:]), line
        english = re.sub(r"--[a-z-]+|`[^`]*`|\S*/\S*|\(\.xlsx\)", "", line)
        assert not re.search(r"\b(is|are|the|with|not|for|only|leave|give)\b", english), line
    lines: list[str] = []
    with use_lang("ko"), _progress(path, False, None, lambda t, err: lines.append(t)) as step:
        step(0, 4, 30.0)
    assert lines and "Dask" in lines[0] and re.search("[가-힣]", lines[0]), lines
    assert "waiting" not in lines[0] and "left" not in lines[0], lines


def test_the_index_breaks_an_input_path_only_at_its_slashes():
    """`scenarios/collectives.csv` wraps as `scenarios/ collectives.csv`, never inside a name
    (`collective s.csv` at 1,300 px): a break opportunity after each slash, and the cell's
    CSS lets nothing else break (no overflow-wrap: anywhere, which also narrows the column)."""
    run = {"run_name": "c", "input_path": "scenarios/night/collectives.csv",
           "report_href": "c/report.html", "scenarios": 1, "compute": 0, "memory": 1,
           "network": 0, "not_fitting": 0, "rejected": 0, "status": "ok"}  # fmt: skip
    html = render_index([run, {**run, "run_name": "d", "input_path": "plain.csv"}])
    assert "<code>scenarios/<wbr>night/<wbr>collectives.csv</code>" in html
    assert "<code>plain.csv</code>" in html
    rules = " ".join(re.findall(r"td\.path\s*\{([^}]*)\}", html))
    assert rules and "anywhere" not in rules and "break-all" not in rules, rules
    assert "overflow-wrap: break-word" in rules or "word-break: keep-all" in rules, rules


@pytest.fixture(scope="module")
def model_steps():
    """Three steps with long names: one that fits, one that does not, an MoE one."""
    return pipeline.analyze(
        [{"name": "llama3_8b_decode_sweep_long", "op": "transformer", "model": "llama3-8b",
          "hardware": "v5e", "B": 32, "T": 1, "S": 2048},
         {"name": "llama3_8b_decode_h100", "op": "transformer", "model": "llama3-8b",
          "hardware": "h100", "B": 32, "T": 1, "S": 2048},
         {"name": "qwen3_moe_decode_ep", "op": "transformer", "model": "qwen3-30b-a3b",
          "hardware": "h100", "chips": 8, "shard": "E", "B": 256, "T": 1, "S": 4096}]
    )  # fmt: skip


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_models_table_wraps_between_words_to_fit_1300_px(model_steps, lang):
    """At 1,300 px the Models table scrolled sideways (Korean: the fit cut mid-value, Max
    batch and Most time out of view): its cells wrap between words (step and op names after
    an underscore, the fit's sizes on a line of their own), its headers wrap, its padding is
    narrower; no cell of it is kept on one line but the numbers."""
    from pipeline.i18n import use_lang

    with use_lang(lang):
        html = render_report(model_steps, "run")
    table = html.split('id="models"')[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    cells = [re.findall(r"<td([^>]*)>(.*?)</td>", r, re.S) for r in rows]
    assert len(cells) == 3
    step, model, fit, top = (cells[0][i] for i in (0, 1, 14, 16))  # Dtypes after Hardware
    assert step[1] == "llama3_<wbr>8b_<wbr>decode_<wbr>sweep_<wbr>long", step
    assert "nw" not in model[0] and "nw" not in fit[0] and "nw" not in top[0], cells[0]
    word, _, sizes = fit[1].partition("<br>")
    sizes = _text(sizes)
    assert _text(word) == ("no" if lang == "en" else "아니요"), fit
    assert sizes == ("24.7 GB of 16.0 GB" if lang == "en" else "24.7 GB / 16.0 GB"), fit
    tops = [c[16][1] for c in cells]  # an op's name wraps after its underscores too
    assert all(t.count("<wbr>") == _text(t).count("_") for t in tops), tops
    css = " ".join(re.findall(r"table\.models[^{]*\{([^}]*)\}", html))
    assert "white-space: normal" in css and "padding" in css, css
