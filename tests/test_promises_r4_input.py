"""Issue 39, round four: the scenario input's header, the language of every command, the
compare threshold, and workbooks (shared formulas, a part's unpacked size); one test per
finding, the probe's cases kept."""

from __future__ import annotations

import struct
import zipfile

import pandas as pd
import pytest

import pipeline
from pipeline.errors import ScenarioFileError
from pipeline.i18n import check_lang, use_lang
from pipeline.scenarios.header import edit_distance, typo_of
from pipeline.scenarios.xlsx import package as xlsx_package
from tests.helpers import (
    BOOK_SCENARIOS,
    HEAD,
    MAIN_NS,
    ROOT,
    cells_xml,
    invoke,
    raw_workbook,
    write_scenarios,
)

ROW = "a,matmul,8,128,128,v5e"
MEASURED = ROOT / "scenarios" / "measured.csv"


def _csv(tmp_path, extra: str, value: str = "x"):
    return write_scenarios(tmp_path, f"{HEAD},{extra}\n{ROW},{value}\n")


# ------------------------------------------- a deliberate column is not a typo (finding 1)

DELIBERATE = [
    "peer_bytes", "bytes_ref", "my_flops", "peerBytes", "Peer Bytes", "flops-measured",
    "q_dtype", "my_hbm_capacity", "notes_2", "model_name", "group_id", "count_of_runs",
]  # fmt: skip


@pytest.mark.parametrize("column", DELIBERATE)
def test_a_column_holding_a_known_column_as_a_word_is_carried_to_the_results(tmp_path, column):
    analysis = pipeline.analyze(_csv(tmp_path, column, "7"))
    assert not analysis.problem_list
    carried = column.strip().lower()
    assert analysis.results[carried].tolist() == ["7"]  # DESIGN.md §2: kept, carried through


def test_the_kept_column_reaches_results_csv(tmp_path):
    analysis = pipeline.analyze(_csv(tmp_path, "peer_bytes", "42"))
    out = analysis.write(tmp_path / "out", plots=False, workbook=False, report=False).folder
    results = pd.read_csv(out / "results.csv", dtype=str)
    assert results["peer_bytes"].tolist() == ["42"]


TYPOS = {
    "dtpye": "dtype",  # a transposition
    "chisp": "chips",
    "dtyp": "dtype",  # a letter left out
    "x dtype": "x_dtype",  # a space for the underscore
    "X-DTYPE": "x_dtype",  # a hyphen, and the case
    "xdtype": "x_dtype",  # the underscore left out
    "peak flops": "peak_flops",
    "measured_secnds": "measured_seconds",
    "hbm_bandwith": "hbm_bandwidth",
    "compute_efficency": "compute_efficiency",
    "kv-dtype": "kv_dtype",
}


@pytest.mark.parametrize(("column", "hint"), TYPOS.items())
def test_a_typo_of_a_known_column_is_still_refused(tmp_path, column, hint):
    path = _csv(tmp_path, column)
    with pytest.raises(ScenarioFileError) as exc:
        pipeline.analyze(path)
    name = column.lower()
    assert str(exc.value).startswith(
        f"{path}:1: column {name}: unknown column; did you mean {hint}? Rename it"
    )


@pytest.mark.parametrize("column", ["top", "team", "owner", "notebook_url", "linked"])
def test_names_far_from_every_known_column_are_carried(tmp_path, column):
    analysis = pipeline.analyze(_csv(tmp_path, column))
    assert analysis.results[column].tolist() == ["x"]


@pytest.mark.parametrize(
    ("name", "written", "typo"),
    [
        ("peerbytes", "peerBytes", None),  # a case change splits the words
        ("peerbytes", "peerbytes", None),  # far from bytes: 4 letters more
        ("hbmcapacity", "HBMCapacity", "hbm_capacity"),  # the name but for the underscore
        ("my_hbm_capacity", "my_hbm_capacity", None),  # two words that are a known column
        ("xflops", "xFlops", None),
        ("xflops", "xflops", "flops"),  # one letter more than flops
        ("share", "share", "shard"),
        ("top", "top", None),  # op allows no edit: two letters
    ],
)
def test_typo_of_words_and_distance(name, written, typo):
    assert typo_of(name, written) == typo


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("dtpye", "dtype", 1), ("dtype", "dtype", 0), ("", "abc", 3), ("kitten", "sitting", 3),
     ("ca", "abc", 3), ("chisp", "chips", 1)],
)  # fmt: skip
def test_edit_distance_counts_a_swap_as_one(a, b, distance):
    assert edit_distance(a, b) == distance


def test_a_long_column_name_is_checked_quickly(tmp_path):
    column = "x" * 32_000  # never measured against names it cannot be within reach of
    analysis = pipeline.analyze(_csv(tmp_path, column))
    assert analysis.results[column].tolist() == ["x"]


def test_a_typo_is_carried_when_kept(tmp_path):
    path = _csv(tmp_path, "dtpye", "fp8")
    analysis = pipeline.analyze(path, keep_columns=["dtpye"])
    assert analysis.results["dtpye"].tolist() == ["fp8"]


# ------------------------------------------------ PIPELINE_LANG like --lang (finding 2)

COMMANDS = {
    "run": lambda tmp: ("run", BOOK_SCENARIOS, "-o", tmp / "out", "--no-plots", "--no-workbook",
                        "--no-report"),
    "validate": lambda tmp: ("validate", BOOK_SCENARIOS),
    "hardware": lambda tmp: ("hardware",),
    "models": lambda tmp: ("models",),
    "template": lambda tmp: ("template", tmp / "t.xlsx"),
    "compare": lambda tmp: ("compare", tmp / "a", tmp / "b", "-o", tmp / "c"),
    "calibrate": lambda tmp: ("calibrate", MEASURED, "-o", tmp / "c.toml"),
}  # fmt: skip


@pytest.mark.parametrize("value", ["xx", "fr_FR.UTF-8", "k o"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_pipeline_lang_is_a_clean_usage_error_on_every_command(
    tmp_path, monkeypatch, command, value
):
    monkeypatch.setenv("PIPELINE_LANG", value)
    result = invoke(*COMMANDS[command](tmp_path))
    assert result.exit_code == 2, result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        f"Error: PIPELINE_LANG is '{value}', not a language of this tool: give en or ko "
        "(any case; a locale such as ko_KR.UTF-8 names its language), or unset it"
    )
    assert "Traceback" not in result.output
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("value", ["KO", "ko_KR.UTF-8", "ko-KR", " Ko ", "ko_KR"])
def test_pipeline_lang_and_lang_take_the_same_spellings(tmp_path, monkeypatch, value):
    assert check_lang(value) == "ko"
    said = invoke("validate", BOOK_SCENARIOS, "--lang", value)
    assert said.exit_code == 0 and "행 13개 읽음" in said.stdout
    monkeypatch.setenv("PIPELINE_LANG", value)
    said = invoke("validate", BOOK_SCENARIOS)
    assert said.exit_code == 0 and "행 13개 읽음" in said.stdout


@pytest.mark.parametrize("value", ["en_US.UTF-8", "C.UTF-8", "POSIX", "EN"])
def test_an_english_locale_is_english(monkeypatch, value):
    monkeypatch.setenv("PIPELINE_LANG", value)
    said = invoke("validate", BOOK_SCENARIOS)
    assert said.exit_code == 0 and "13 rows read" in said.stdout


def test_a_bad_lang_option_names_the_valid_values():
    said = invoke("validate", BOOK_SCENARIOS, "--lang", "xx")
    assert said.exit_code == 2
    assert said.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--lang': 'xx' is not one of 'en', 'ko' (any case; a locale "
        "such as ko_KR.UTF-8 names its language)"
    )


def test_lang_en_overrides_a_bad_pipeline_lang(monkeypatch):
    monkeypatch.setenv("PIPELINE_LANG", "xx")
    said = invoke("validate", BOOK_SCENARIOS, "--lang", "en")
    assert said.exit_code == 0 and "13 rows read" in said.stdout


@pytest.mark.parametrize("how", ["env", "option"])
def test_template_hardware_and_models_honour_the_language(tmp_path, monkeypatch, how):
    lang = ("--lang", "ko") if how == "option" else ()
    if how == "env":
        monkeypatch.setenv("PIPELINE_LANG", "ko")
    made = invoke("template", tmp_path / "t.xlsx", *lang)
    assert made.exit_code == 0
    assert made.stdout == f"{tmp_path / 't.xlsx'}: 작성함. Scenarios 시트를 채운 뒤 실행하세요\n"
    listed = invoke("hardware", *lang)
    assert listed.exit_code == 0
    assert listed.stdout.splitlines()[-1].startswith("카탈로그 버전 ")
    chip = invoke("hardware", "h100", *lang)
    assert "출처" in chip.stdout and "sources (each figure" not in chip.stdout
    models = invoke("models", *lang)
    assert models.exit_code == 0
    assert models.stdout.splitlines()[-1].startswith("모델 카탈로그 버전 ")
    one = invoke("models", "llama3-8b", *lang)
    assert "params (counted)" not in one.stdout and "weights at bf16" not in one.stdout


# ------------------------------------------------------- --threshold checked (finding 3)


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "-0.1", "1", "2", "abc"])
def test_a_threshold_out_of_range_is_a_usage_error_quoting_it(tmp_path, value):
    said = invoke("compare", tmp_path / "a", tmp_path / "b", "-o", tmp_path / "c",
                  f"--threshold={value}")  # fmt: skip
    assert said.exit_code == 2
    assert said.stderr.strip().splitlines()[-1] == (
        f"Error: Invalid value for '--threshold': '{value}' is not a fraction in [0, 1); "
        "give one, e.g. 0.05"
    )
    assert not (tmp_path / "c").exists()


# --------------------------------------- a Korean header error is Korean (finding 4)


@pytest.mark.parametrize(
    "text",
    [
        f"{HEAD},dtpye\n{ROW},x\n",  # a typo
        "nme,op,B,D,F,hardware\nx,matmul,8,8,8,v5e\n",  # a required column missing
        "name,op,B,D,F,hardware,op\nx,matmul,8,8,8,v5e,matmul\n",  # a name twice
        "name,op,B,D,F,hardware,\nx,matmul,8,8,8,v5e,1\n",  # an empty name
    ],
)
def test_a_korean_header_error_says_column_in_korean(tmp_path, text):
    path = write_scenarios(tmp_path, text)
    said = invoke("validate", path, "--lang", "ko")
    assert said.exit_code == 1
    line = said.stderr.strip().splitlines()[-1]
    assert line.startswith(f"오류: {path}:1: ") and "열" in line
    words = line.replace("--keep-column", "").replace("keep_columns=", "")
    assert "column" not in words.lower(), line


def test_the_korean_header_warning_says_column_in_korean(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD},bound\n{ROW},x\n")
    said = invoke("validate", path, "--lang", "ko")
    assert "경고: " in said.stderr and "column" not in said.stderr


def test_a_korean_header_error_of_a_workbook_says_column_in_korean(tmp_path):
    rows = [[*HEADER, "op"], ["a", "matmul", 8, 8, 8, "v5e", "matmul"]]
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": cells_xml(rows)})
    said = invoke("validate", path, "--lang", "ko")
    line = said.stderr.strip().splitlines()[-1]
    assert line == f"오류: {path}[Scenarios]:1: 두 번 나오는 열 이름: 'op' (셀 B1, G1)"


def test_the_english_header_errors_are_as_before(tmp_path):
    path = write_scenarios(tmp_path, "nme,op,B,D,F,hardware\nx,matmul,8,8,8,v5e\n")
    with use_lang("en"), pytest.raises(ScenarioFileError) as exc:
        pipeline.analyze(path)
    assert str(exc.value) == (
        f"{path}:1: missing required column(s) 'name' (did you mean 'nme'?); the header needs "
        "name, op, hardware"
    )


# --------------------------------------------------------- workbooks (finding 5)

HEADER = ["name", "op", "B", "D", "F", "hardware"]


@pytest.mark.parametrize("read", ["fast", "replayed"])
def test_a_shared_formulas_dependent_cell_quotes_its_formula(tmp_path, read):
    rows = [
        HEADER,
        ["a", "matmul", b'<c r="C2"><f t="shared" ref="C2:C4" si="0">A9*2</f></c>', 8, 8, "v5e"],
        ["b", "matmul", b'<c r="C3"><f t="shared" si="0"/></c>', 8, 8, "v5e"],
        ["c", "matmul", b'<c r="C4"><f t="shared" si="0"></f></c>', 8, 8, "v5e"],
        ["d", "matmul", 8, 8, 8, "v5e"],
    ]
    comment = "<!-- a comment: the whole sheet is replayed -->" if read == "replayed" else ""
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": comment + cells_xml(rows)})
    problems = [str(p) for p in pipeline.analyze(path).problem_list]
    where = f"{path}[Scenarios]"
    tail = "has no value saved: open the workbook in Excel or LibreOffice and save it, or type "
    assert problems == [
        f"{where}:2: column B: a formula '=A9*2' {tail}the value",
        f"{where}:3: column B: a formula '=A10*2' {tail}the value",
        f"{where}:4: column B: a formula '=A11*2' {tail}the value",
    ]


def test_a_shared_formula_whose_master_has_a_value_still_names_it(tmp_path):
    rows = [
        HEADER,
        ["a", "matmul", b'<c r="C2"><f t="shared" ref="C2:C3" si="3">$A$1+B2</f><v>8</v></c>',
         8, 8, "v5e"],
        ["b", "matmul", b'<c r="C3"><f t="shared" si="3"/></c>', 8, 8, "v5e"],
    ]  # fmt: skip
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": cells_xml(rows)})
    problems = [str(p) for p in pipeline.analyze(path).problem_list]
    assert problems == [
        f"{path}[Scenarios]:3: column B: a formula '=$A$1+B3' has no value saved: open the "
        "workbook in Excel or LibreOffice and save it, or type the value"
    ]


def _declared_size(path, member: str, size: int) -> None:
    """Rewrite the zip's central directory so `member` declares `size` unpacked bytes (the
    bytes stay small: a part that says 1.2 GB, never written)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    name = member.encode()
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        (length,) = struct.unpack_from("<H", data, at + 28)
        if bytes(data[at + 46 : at + 46 + length]) == name:
            struct.pack_into("<I", data, at + 24, size)  # uncompressed size
            break
        at = data.find(b"PK\x01\x02", at + 4)
    assert at >= 0 and info.file_size < size
    path.write_bytes(bytes(data))


def test_a_part_that_declares_more_than_the_limit_is_refused_before_it_is_read(tmp_path):
    rows = [HEADER, ["a", "matmul", 8, 8, 8, "v5e"]]
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": cells_xml(rows)})
    _declared_size(path, "xl/worksheets/sheet1.xml", 1_200_000_000)
    with pytest.raises(ScenarioFileError) as exc:
        pipeline.analyze(path)
    limit = xlsx_package.MAX_PART
    assert str(exc.value) == (
        f"{path}: the part 'xl/worksheets/sheet1.xml' would unpack to 1,200,000,000 bytes, past "
        f"the {limit:,} bytes a workbook part may take; save the scenarios as CSV, or split "
        "the sheet"
    )


def test_the_part_limit_counts_the_unpacked_size_of_a_compressible_part(tmp_path, monkeypatch):
    rows = [HEADER, *([f"r{i}", "matmul", 8, 8, 8, "v5e"] for i in range(13))]
    padded = cells_xml(rows) + " " * 200_000  # packs to a few hundred bytes
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": padded})
    assert path.stat().st_size < 20_000
    assert len(pipeline.analyze(path).results) == 13
    monkeypatch.setattr(xlsx_package, "MAX_PART", 100_000)
    with pytest.raises(ScenarioFileError, match=r"'xl/worksheets/sheet1\.xml' would unpack to "
                       r"20\d,\d{3} bytes, past the 100,000 bytes a workbook part may take"):  # fmt: skip
        pipeline.analyze(path)


def test_the_part_limit_is_in_limits():
    from pipeline import limits

    assert xlsx_package.MAX_PART == limits.MAX_WORKBOOK_PART < xlsx_package.MAX_UNPACKED
    assert MAIN_NS.startswith("http")
