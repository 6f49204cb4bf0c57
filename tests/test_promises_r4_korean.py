"""Issue 39, "Korean, finished": a `--lang ko` run of the shipped scenarios (q1-q5,
collectives, models, measured with a calibration) says no word of English in its report, its
workbook, its charts and its terminal lines beyond the data (names, notes, sources, units, op
names, chip names, column names of the data sheets) and the terms the chapter's Korean
translation keeps in English (arithmetic intensity, critical batch); its Korean reads as that
translation does (docs/languages.md): particles follow the name they attach to, a factor is
배, "fits" is the translation's 맞다, and wide Korean headers fit their columns."""

from __future__ import annotations

import csv
import re
import tomllib
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import openpyxl
import pytest

import pipeline
from pipeline.i18n import use_lang
from pipeline.render.charts import figure, plan_charts
from pipeline.render.charts.step_sweep_data import model_frame
from pipeline.render.workbook.cells import text_width
from pipeline.summary.grids import chart_frame
from pipeline.summary.turns import sweep_lines
from tests.helpers import ROOT, figure_texts, invoke

SCENARIOS = ROOT / "scenarios"
HANGUL = re.compile("[\uac00-\ud7a3]")
# English that a Korean output must not say (each seen in one before this fix)
ENGLISH = (
    "footprint",
    "ridge",
    "index of",
    "Arithmetic intensity",
    "scenarios are timed at derated rates",
    "tokens/s and",
    "Tokens/s",
    "(first)",
    "(last)",
)
# Korean that reads as a machine's: a particle left for the reader to choose, a "×" read as a
# noun, the unit half in English, and "들어가다" for "fits" (the translation says 맞다)
AWKWARD = ("은(는)", "이(가)", "을(를)", "과(와)", "(으)로", "×가", "×는", "×이", "×의", "×를",
           "토큰/s", "들어감", "들어가")  # fmt: skip
# a header or a cell that is one English word of the report's or the workbook's own
HEADERS = {"Op", "op", "Dtype", "Dtypes", "Tokens/s", "tokens/s", "Fits", "footprint"}
DATA_SHEETS = {"Results", "Inputs", "Hardware", "Errors"}  # the data schema: English
NAMES = ("q1-q5", "collectives", "models", "measured", "fleet")  # the shipped scenario files


def data_texts() -> list[str]:
    """The texts a run shows from its data: the inputs' notes and the catalogs' sources."""
    texts = set()
    for path in [*SCENARIOS.glob("*.csv"), *(ROOT / "pipeline" / "data").rglob("*.csv")]:
        with path.open(encoding="utf-8") as f:
            texts |= {cell for row in csv.reader(f) for cell in row if len(cell) > 12}
    return sorted(texts, key=len, reverse=True)


DATA = data_texts()


class Texts(HTMLParser):
    """A page's words: its text nodes, its titles, and its table headers apart."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.headers: list[str] = []
        self._skip = 0
        self._th: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script"):
            self._skip += 1
        if tag == "th":
            self._th = []
        self.texts += [v for k, v in attrs if k in ("title", "alt", "aria-label") and v]

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self._skip -= 1
        if tag == "th" and self._th is not None:
            self.headers.append(" ".join("".join(self._th).split()))
            self._th = None

    def handle_data(self, data):
        if self._skip:
            return
        self.texts.append(data)
        if self._th is not None:
            self._th.append(data)


def without_data(text: str) -> str:
    for shown in DATA:
        if shown in text:
            text = text.replace(shown, " ")
    return text


def said_wrong(texts) -> list[tuple[str, str]]:
    """(the word, the text) for every listed English or awkward word in `texts`."""
    found = []
    for text in texts:
        text = without_data(text)
        found += [(word, text) for word in ENGLISH + AWKWARD if word in text]
    return found


def workbook_texts(path: Path) -> tuple[list[str], list[str]]:
    """The workbook's words outside the data sheets, and its Models sheet's headers."""
    book = openpyxl.load_workbook(path)
    texts, headers = [], []
    for sheet in book.worksheets:
        if sheet.title in DATA_SHEETS:
            continue
        for row in sheet.iter_rows():
            texts += [c.value for c in row if isinstance(c.value, str)]
    if "Models" in book.sheetnames:
        headers = [c.value for c in book["Models"][5] if c.value]
    return texts, headers


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Each shipped scenario file written in Korean, the measured one with a calibration."""
    out = tmp_path_factory.mktemp("ko")
    calibration = pipeline.calibrate(SCENARIOS / "measured.csv")  # no chart drawn
    folders = {}
    for name in NAMES:
        extra = {"calibration": calibration} if name == "measured" else {}
        analysis = pipeline.analyze(SCENARIOS / f"{name}.csv", **extra)
        analysis.write(out / name, plots=False, lang="ko")
        folders[name] = out / name
    return folders


@pytest.mark.parametrize("name", NAMES)
def test_a_korean_report_says_no_listed_english_word(runs, name):
    page = Texts()
    page.feed((runs[name] / "report.html").read_text(encoding="utf-8"))
    assert said_wrong(page.texts) == []
    assert sorted(set(page.headers) & HEADERS) == []


@pytest.mark.parametrize("name", NAMES)
def test_a_korean_workbook_says_no_listed_english_word(runs, name):
    texts, headers = workbook_texts(runs[name] / "workbook.xlsx")
    assert said_wrong(texts) == []
    assert sorted({t.strip() for t in texts} & HEADERS) == []
    assert sorted(set(headers) & HEADERS) == []


def test_the_notebooks_korean_summary_says_no_listed_english_word():
    analysis = pipeline.analyze(SCENARIOS / "models.csv")
    with use_lang("ko"):
        page = Texts()
        page.feed(analysis._repr_html_())
        said = repr(analysis)
    assert said_wrong([*page.texts, said]) == []
    assert sorted(set(page.headers) & HEADERS) == []
    assert "연산 종류" in page.headers and "초당 토큰 수" in page.headers


def page_text(folder: Path) -> str:
    page = Texts()
    page.feed((folder / "report.html").read_text(encoding="utf-8"))
    return " ".join(" ".join(page.texts).split())


def test_a_particle_follows_the_names_last_sound_and_a_factor_is_bae(runs):
    # dot_product: "프로덕트", no final consonant: 는; 512: "오백십이": 는
    assert "가장 나쁜 dot_product는 연산 시간의 480배가 걸림" in page_text(runs["q1-q5"])
    models = page_text(runs["models"])
    assert "llama3_8b_decode_sweep[B=512]는 HBM의 7.07배가 필요" in models
    assert "residual은 연산 시간의 1,771배가 걸림" in models  # "레지듀얼": 은


def test_the_korean_words_for_fits_footprint_and_tokens_per_second(runs):
    models = page_text(runs["models"])
    assert "HBM에 맞음" in models and "초당 토큰 수" in models
    texts, headers = workbook_texts(runs["models"] / "workbook.xlsx")
    assert "칩당 메모리 사용량" in headers and "초당 토큰 수" in headers
    assert "HBM에 맞음" in headers


def test_the_derated_notice_is_korean(runs):
    text = page_text(runs["collectives"])
    assert "시나리오 27개 중 2개는 효율을 반영한 속도로" in text
    texts, _headers = workbook_texts(runs["collectives"] / "workbook.xlsx")
    assert any("시나리오 27개 중 2개는 효율을 반영한 속도로" in t for t in texts)


def test_the_models_sheets_korean_headers_fit_their_columns_and_do_not_run_together(runs):
    book = openpyxl.load_workbook(runs["models"] / "workbook.xlsx")
    sheet = book["Models"]
    for cell in sheet[5]:
        if not cell.value:
            continue
        width = sheet.column_dimensions[cell.column_letter].width
        words = max(text_width(w) for w in cell.value.split())
        if cell.alignment.wrap_text:  # wraps at a space: its widest word fits
            assert width >= words + 1, cell.value
        else:
            assert width >= text_width(cell.value) + 1, cell.value
    # a left-aligned header after a right-aligned one is set off by an indent
    for left, right in zip(sheet[5], sheet[5][1:], strict=False):
        if left.alignment.horizontal == "right" and right.alignment.horizontal != "right":
            assert right.alignment.indent >= 1, (left.value, right.value)


@pytest.mark.parametrize("name", ["q1-q5", "models"])
def test_korean_charts_say_no_listed_english_word(name):
    analysis = pipeline.analyze(SCENARIOS / f"{name}.csv")
    s = analysis.summary
    drawn = []
    with use_lang("ko"):
        frame = chart_frame(analysis)
        planned = plan_charts(frame, list(analysis.hardware), s.per_hardware, s.overrides,
                              fleet=s.fleet, curves=s.fleet_curves, steps=model_frame(analysis),
                              roofs=s.roofs, lines=sweep_lines(frame))  # fmt: skip
        for p in planned:
            if p.chart.kind in ("roofline", "model") and (data := p.build()) is not None:
                fig = figure(data)
                drawn += figure_texts(fig) + [p.chart.title]
    assert drawn
    assert said_wrong(drawn) == []
    if name == "models":  # the model chart's "B = 32: 2,155 tokens/s" (issue 39)
        assert not [t for t in drawn if "tokens/s" in t], drawn
        assert any(re.search(r"B = [\d,]+: 초당 [\d,]+ 토큰", t) for t in drawn), drawn
    if name == "q1-q5":
        assert "arithmetic intensity (바이트당 FLOP)" in drawn  # the term kept, as the book
        assert any(t.startswith("교차점 240 FLOP/byte") for t in drawn), drawn


def test_the_chips_chart_in_korean():
    with use_lang("ko"):
        fig = pipeline.charts.chips(["h100", "tpu-v5e"])
    drawn = figure_texts(fig)
    assert said_wrong(drawn) == []
    assert any("교차점" in t for t in drawn)


def test_the_terminal_index_line_is_korean(tmp_path):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    for path in (first, second):
        path.write_text("name,op,B,D,F,hardware\nx,matmul,8,128,128,h100\n", encoding="utf-8")
    said = invoke("run", first, second, "-o", tmp_path / "out", "--no-plots", "--no-workbook",
                  "--lang", "ko")  # fmt: skip
    assert said.exit_code == 0, said.output
    assert "index of" not in said.stdout
    assert f"실행 2개의 색인 -> {tmp_path / 'out' / 'index.html'}" in said.stdout
    english = invoke("run", first, second, "-o", tmp_path / "en", "--no-plots", "--no-workbook")
    assert f"index of 2 runs -> {tmp_path / 'en' / 'index.html'}" in english.stdout


# ---------------------------------------------------------------- the catalogs' terms

# the chapter's translation's word for each term, and the words that stood for it before
TERMS = {
    "fits (in HBM)": ("맞", ("들어감", "들어가", "들어갑", "적재")),
    "overlap": ("중첩", ("겹",)),
    "activation": ("활성화", ("활성값",)),
    "footprint": ("메모리 사용량", ("footprint",)),
    "ridge point": ("교차점", ("ridge",)),
    "knee": ("꺾임점", ("무릎점",)),
    "collective": ("집합 통신", ("컬렉티브",)),
    "derated": ("효율 반영", ("감액",)),
    "tokens/s": ("초당 토큰 수", ("토큰/s",)),
    "log scale": ("로그 척도", ("로그 스케일",)),
}


def korean_texts() -> dict[str, str]:
    folder = resources.files("pipeline") / "data" / "i18n" / "ko"
    texts = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".toml") and entry.name != "help.toml":
            texts.update(tomllib.loads(entry.read_text(encoding="utf-8")))
    return texts


@pytest.mark.parametrize("term", sorted(TERMS))
def test_every_korean_text_says_a_term_as_the_translation_does(term):
    _word, before = TERMS[term]
    said = {en: re.sub(r"\{\w*\}", "", ko) for en, ko in korean_texts().items()}  # no {fields}
    wrong = {en: ko for en, ko in said.items() if any(w in ko for w in before)}
    assert wrong == {}


def test_the_translations_words_are_its_own():
    book = ROOT.parent / "shared" / "reference" / "all-about-rooflines.ko.md"
    if not book.exists():
        pytest.skip("the chapter's translation is not beside the project")
    text = book.read_text(encoding="utf-8")
    for word in ("연산 병목", "통신 병목", "arithmetic intensity", "critical intensity", "루프라인",
                 "대역폭", "하한", "맞도록", "교차", "처리량"):  # fmt: skip
        assert word in text, word


def test_the_override_sentence_reads_as_korean(runs):
    """Found by a review: '행 1개 이 자체 수치(…)로 이 수치를 대체합니다', a particle adrift."""
    text = page_text(runs["q1-q5"])
    assert "행 1개 — 이 행은 자체 수치(peak_flops" in text
    assert "개 이 자체 수치" not in text


def test_the_models_tables_time_headers_read_in_korean_order(runs):
    html = (runs["models"] / "report.html").read_text(encoding="utf-8")
    assert "스텝당<br>시간" in html and "토큰당<br>시간" in html
    assert "시간<br>스텝당" not in html
