"""Property-based fuzzing of scenario workbooks, written part by part so the XML can be odd:
error cells, formulas with and without a saved value, far cells, shared strings (some past
the table's end), cells and rows without `r`, prefixed elements, attributes in single quotes,
comments and CDATA, part names in another case, UTF-16. Whatever the workbook holds,
`pipeline.analyze()` gives an Analysis or a PipelineError with a message, never another
exception, never a crash of the process (python-calamine aborts on an allocation it cannot
make), and never a sheet read two ways (the check before the read bounds what
python-calamine finds, and the cells it marks are empty in python-calamine's read).

FUZZ_EXAMPLES sets the number of examples (default 25; `make soak` sets 1000)."""

from __future__ import annotations

import os
from xml.sax.saxutils import escape

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.errors import PipelineError
from pipeline.scenarios.xlsx.budget import ref
from tests.helpers import MAIN_NS, raw_workbook

SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HEADER = ["name", "op", "B", "D", "F", "hardware", "chips"]
STRINGS = ["v5e", "matmul", "h100", "", " padded ", "x" * 300]
ERRORS = ["#DIV/0!", "#N/A", "#REF!", "#VALUE!", "#NAME?", "#NUM!", "#NULL!", "#SPILL!", "#X"]

# a cell's content: (t attribute or None, inner XML), {s} where a shared string's index goes
content = st.one_of(
    st.integers(-5, 10**6).map(lambda n: (None, f"<v>{n}</v>")),
    st.floats(allow_nan=False).map(lambda x: ("n", f"<v>{x!r}</v>")),
    st.text(max_size=12).map(lambda s: ("inlineStr", f"<is><t>{escape(_xml_safe(s))}</t></is>")),
    st.integers(0, len(STRINGS) - 1).map(lambda i: ("s", f"<v>{i}</v>")),
    st.just(("s", f"<v>{len(STRINGS) + 3}</v>")),  # past the table's end
    st.sampled_from(ERRORS).map(lambda e: ("e", f"<v>{escape(e)}</v>")),
    st.sampled_from(
        ["<f>1+1</f>", "<f>A1</f><v></v>", "<v>2</v><f>1+1</f>", '<f t="shared" si="0"/>']
    ).map(lambda f: (None, f)),
    st.sampled_from(["<f>1+1</f><v>2</v>", "<f>A1*2</f><v>16</v>"]).map(lambda f: (None, f)),
    st.sampled_from(
        [("b", "<v>1</v>"), ("d", "<v>2024-01-05T00:00:00</v>"), ("str", "<f>x</f><v></v>")]
    ),
    st.sampled_from([(None, ""), (None, "<v></v>"), ("inlineStr", "<v>5</v>"), ("z", "<v>1</v>")]),
)
far = st.one_of(  # near the table, or past the grid's budget (never a slow grid just under it)
    st.tuples(st.integers(1, 200), st.integers(0, 60)),
    st.tuples(st.integers(700_000, 1_048_576), st.integers(20, 16_383)),
)


def _xml_safe(text: str) -> str:
    return "".join(ch for ch in text if ch in "\t\n\r" or " " <= ch <= "\ud7ff")


@st.composite
def workbooks(draw):
    """(sheet XML, shared strings XML or None, parts, note) of a random scenario sheet."""
    rows: list[list[tuple[int, tuple[str | None, str]]]] = [
        [(c, ("inlineStr", f"<is><t>{h}</t></is>")) for c, h in enumerate(HEADER)]
    ]
    base = [("inlineStr", "<is><t>r</t></is>"), ("inlineStr", "<is><t>matmul</t></is>"),
            (None, "<v>8</v>"), (None, "<v>64</v>"), (None, "<v>64</v>"),
            ("inlineStr", "<is><t>v5e</t></is>"), (None, "<v>1</v>")]  # fmt: skip
    for _ in range(draw(st.integers(1, 4))):
        values = list(base)
        for _ in range(draw(st.integers(0, 3))):
            values[draw(st.integers(0, 6))] = draw(content)
        cells = list(enumerate(values))
        if draw(st.integers(0, 5)) == 0:
            cells.append((draw(st.integers(7, 40)), draw(content)))  # a stray cell
        rows.append(cells)
    numbers = list(range(1, len(rows) + 1))
    extra = ""
    if draw(st.integers(0, 4)) == 0:
        r, c = draw(far)
        t, inner = draw(content)
        style = draw(st.sampled_from(["", ' s="1"']))
        extra = f'<row r="{r}"><c r="{ref(r - 1, c)}"{_t(t)}{style}>{inner}</c></row>'
    omit_r, prefix = draw(st.booleans()), draw(st.sampled_from(["", "", "x:"]))
    quote = draw(st.sampled_from(['"', '"', "'"]))
    body = []
    for number, cells in zip(numbers, rows, strict=True):
        out = []
        for c, (t, inner) in cells:
            at = "" if omit_r else f" r={quote}{ref(number - 1, c)}{quote}"
            kind = "" if t is None else f" t={quote}{t}{quote}"
            out.append(f"<c{at}{kind}>{inner}</c>" if inner else f"<c{at}{kind}/>")
        row_at = "" if omit_r else f' r="{number}"'
        body.append(f"<row{row_at}>{''.join(out)}</row>")
    xml = "".join(body) + extra
    if draw(st.integers(0, 5)) == 0:
        xml = draw(st.sampled_from(["<!-- c -->", "<?pi x?>", ""])) + xml
    if prefix:
        for name in ("row", "c", "is", "t", "v", "f"):
            xml = xml.replace(f"<{name}>", f"<x:{name}>").replace(f"<{name} ", f"<x:{name} ")
            xml = xml.replace(f"</{name}>", f"</x:{name}>").replace(f"<{name}/", f"<x:{name}/")
    ns = f'xmlns:x="{MAIN_NS}"' if prefix else f'xmlns="{MAIN_NS}"'
    sheet = (
        f"<{prefix}worksheet {ns}><{prefix}sheetData>{xml}</{prefix}sheetData></{prefix}worksheet>"
    )
    encoded = sheet.encode("utf-8")
    style = draw(st.sampled_from(["plain"] * 12 + ["utf-16", "truncated", "dtd"]))
    if style == "utf-16":
        encoded = ('<?xml version="1.0" encoding="UTF-16"?>' + sheet).encode("utf-16")
    elif style == "truncated":
        encoded = encoded[: draw(st.integers(0, len(encoded)))]
    elif style == "dtd":
        encoded = b'<!DOCTYPE w [<!ENTITY a "aaaa">]>' + encoded
    strings = None
    if draw(st.integers(0, 4)) > 0:
        items = "".join(f"<si><t>{escape(s)}</t></si>" for s in STRINGS)
        strings = f'<sst xmlns="{MAIN_NS}">{items}</sst>'.encode()
    parts = {}
    if draw(st.integers(0, 4)) == 0:
        parts = {"xl/worksheets/sheet1.xml": None, "xl/worksheets/SHEET1.xml": encoded}
    return encoded, strings, parts


def _t(t):
    return "" if t is None else f' t="{t}"'


@SETTINGS
@given(book=workbooks())
def test_any_workbook_gives_an_analysis_or_an_error_with_a_message(tmp_path_factory, book):
    encoded, strings, parts = book
    path = raw_workbook(
        tmp_path_factory.mktemp("book") / "s.xlsx", {"Scenarios": encoded}, strings, parts
    )
    try:
        analysis = pipeline.analyze(path)
    except PipelineError as exc:
        message = str(exc)
        assert message.startswith(str(path)), message
        assert "reads two ways" not in message, message  # the check and python-calamine agree
        return
    assert analysis.summary.source_rows >= 1
