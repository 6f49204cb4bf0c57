"""What several test files share (tests import this and conftest, never each other): the
project's paths, analyses built through `pipeline.analyze()`, scenario files, the command
line, PNG builders and checks, chart inputs, the /proc walkers, and the big mixed scenario
frame the fault tests and the benchmarks run."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import posixpath
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
import zlib
from dataclasses import replace
from html import unescape
from pathlib import Path

import numpy as np
import pandas as pd

import pipeline
from pipeline.catalogs.hardware import Catalog
from pipeline.scenarios import Loaded, load_scenarios

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "golden"
BOOK_SCENARIOS = ROOT / "scenarios" / "q1-q5.csv"
STARTED = "2026-01-01T00:00:00+00:00"

HEAD = "name,op,B,D,F,hardware"  # the header of a matmul scenario file
FAST = ("--no-plots", "--no-workbook", "--no-report")  # `pipeline run`: the tables only
FAST_WRITE = {"plots": False, "workbook": False, "report": False}  # the same for write()
HOSTILE = ("<script>alert(1)</script>", '"><img src=x onerror=1>')  # text a page must escape
# train rows (issue 45): a fleet over chips and chips where the smaller counts do not fit,
# and a tensor-parallel series over chips only (the `training` fixture)
TRAINING = """name,op,model,hardware,dtype,chips,tokens,train_tokens,parallel,compute_efficiency
fsdp,train,llama3-70b,h100|tpu-v5p,bf16,256|1024|4096,16e6,15e12,,0.45
tp,train,llama3-70b,h100|b200,bf16,4096,4e6,15e12,fsdp=512 tp=8,0.45
"""
EXTERNAL = ("http://", "https://", 'src="//', "@import", "<link")  # what a page must not load

# ---------------------------------------------------------------- analyses


def fixed(analysis: pipeline.Analysis) -> pipeline.Analysis:
    """The analysis with a fixed start time and tool version, and its file named relative to
    the repository, for outputs that are the same bytes on every machine."""
    source = analysis.source
    if Path(source).is_absolute() and Path(source).is_relative_to(ROOT):
        source = Path(source).relative_to(ROOT).as_posix()
    return replace(analysis, started=STARTED, tool_version="test", source=source)


def analyze_file(path: Path, **kwargs) -> pipeline.Analysis:
    """A scenario file analyzed, with fixed()'s start time, version and name."""
    return fixed(pipeline.analyze(path, **kwargs))


def analyze_rows(rows: list[dict], **kwargs) -> pipeline.Analysis:
    """Rows in memory analyzed (a real analysis: its summary matches its results)."""
    return fixed(pipeline.analyze(rows, **kwargs))


def write_scenarios(tmp_path: Path, text: str, name: str = "s.csv") -> Path:
    path = tmp_path / name
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    return path


def load_text(tmp_path: Path, catalog: Catalog, text: str, **kw) -> Loaded:
    return load_scenarios(write_scenarios(tmp_path, text), catalog, **kw)


def compute_text(tmp_path: Path, catalog: Catalog, text: str) -> pd.DataFrame:
    """The results of a scenario text that must have no problems, indexed by name."""
    analysis = pipeline.analyze(write_scenarios(tmp_path, text), hardware=catalog)
    assert not analysis.problem_list, [str(p) for p in analysis.problem_list]
    return analysis.results.set_index("name", drop=False)


def toml_text(text: str) -> str:
    """`text` escaped for the inside of a TOML basic string ("..."): every control character
    written as a \\u escape, so any text makes valid TOML."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(ch if ch >= " " and ch != "\x7f" else f"\\u{ord(ch):04x}" for ch in out)


# ---------------------------------------------------------------- the command line, folders


def invoke(*args):
    """`pipeline ARGS` in this process (click's runner); stderr apart from stdout."""
    from click.testing import CliRunner

    from pipeline.cli import cli
    from pipeline.i18n import set_lang

    try:
        return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    finally:
        set_lang(None)  # --lang holds for a process: not for the next test in this one


def pipeline_cmd(*args, **kwargs) -> subprocess.CompletedProcess:
    """`python -m pipeline ARGS` in a process of its own, from the project folder."""
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *map(str, args)],
        capture_output=True, text=True, cwd=kwargs.pop("cwd", ROOT), **kwargs,
    )  # fmt: skip


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` and its bytes, by relative path."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def dead_pid() -> int:
    """The id of a process that has ended (its own, printed before it exited)."""
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(proc.stdout)


def assert_matches_manifest(folder: Path) -> dict:
    """The folder holds exactly the files its manifest lists, each with its size and hash."""
    manifest = json.loads((folder / "manifest.json").read_text())
    listed = {f["path"]: f for f in manifest["files"]}
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert present == set(listed) | {"manifest.json"}
    for path, entry in listed.items():
        data = (folder / path).read_bytes()
        assert len(data) == entry["bytes"] and hashlib.sha256(data).hexdigest() == entry["sha256"]
    return manifest


# ---------------------------------------------------------------- workbooks


def workbook_of(analysis: pipeline.Analysis, folder: Path, **kwargs):
    """Write the analysis's workbook into `folder` (run name q1-q5) and read it back with
    openpyxl: (the workbook, the notices the writer added)."""
    import openpyxl

    from pipeline.render.workbook.book import write_workbook

    path = folder / "workbook.xlsx"
    charts = kwargs.pop("charts", [])
    notices = kwargs.pop("notices", [])
    own = write_workbook(analysis, path, "q1-q5", charts, notices, **kwargs)
    return openpyxl.load_workbook(path), own


def column_of(sheet, name: str) -> int:
    """1-based column index of a header on an openpyxl sheet."""
    return [c.value for c in sheet[1]].index(name) + 1


def sheet_text(sheet) -> list[str]:
    """Every filled cell of an openpyxl sheet, as text, row by row."""
    return [str(v) for row in sheet.iter_rows(values_only=True) for v in row if v is not None]


_XL = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"


def _targets(z: zipfile.ZipFile, part: str) -> dict[str, str]:
    """An xlsx part's relationships: the parts they name, by id."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", f"{name}.rels")
    if rels not in z.namelist():
        return {}
    return {r.get("Id"): posixpath.normpath(posixpath.join(folder, r.get("Target"))).lstrip("/")
            for r in ET.fromstring(z.read(rels))}  # fmt: skip


def _sheet_part(z: zipfile.ZipFile, sheet: str) -> str:
    """The part holding the sheet named `sheet` (xl/worksheets/sheetN.xml)."""
    book = ET.fromstring(z.read("xl/workbook.xml"))
    (rid,) = [s.get(f"{_REL}id") for s in book.iter(f"{_XL}sheet") if s.get("name") == sheet]
    return _targets(z, "xl/workbook.xml")[rid]


def sheet_cells(path: Path, sheet: str) -> list[str]:
    """The cells a workbook's sheet holds in the file (blank or not), as A1 references."""
    with zipfile.ZipFile(path) as z:
        root = ET.fromstring(z.read(_sheet_part(z, sheet)))
    return [c.get("r") for c in root.iter(f"{_XL}c")]


def sheet_images(path: Path, sheet: str) -> list[tuple]:
    """The pictures a workbook's sheet shows, in the file's order, read from its XML (openpyxl
    has no public way): each picture's anchor (twoCellAnchor, oneCellAnchor), its first cell
    and the last (None for one cell) as (column, offset, row, offset), and its image's SHA-256."""
    with zipfile.ZipFile(path) as z:
        part = _sheet_part(z, sheet)
        drawing = ET.fromstring(z.read(part)).find(f"{_XL}drawing")
        if drawing is None:
            return []
        part = _targets(z, part)[drawing.get(f"{_REL}id")]
        media = _targets(z, part)
        found = []
        for anchor in ET.fromstring(z.read(part)):
            pic = anchor.find(f"{_XDR}pic")
            if pic is None:
                continue
            cells = [
                None if cell is None else tuple(int(cell.find(f"{_XDR}{k}").text)
                                                for k in ("col", "colOff", "row", "rowOff"))
                for cell in (anchor.find(f"{_XDR}from"), anchor.find(f"{_XDR}to"))
            ]  # fmt: skip
            blip = next(e for e in pic.iter() if e.tag.endswith("}blip"))
            image = z.read(media[blip.get(f"{_REL}embed")])
            found.append((anchor.tag.split("}")[1], *cells, hashlib.sha256(image).hexdigest()))
        return found


# ---------------------------------------------------------------- PNGs

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def tiny_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour PNG, byte-for-byte stable (stored deflate), for golden files."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        PNG_MAGIC
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 0))
        + chunk(b"IEND", b"")
    )


def figure_png(title: str = "", size: tuple[float, float] = (3, 2), dpi: int = 50) -> bytes:
    """A small real chart drawn with matplotlib's Figure API (no pyplot)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=dpi)
    ax = fig.subplots()
    ax.loglog([0.1, 240, 1e5], [1e10, 1.97e14, 1.97e14])
    ax.set_title(title)
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def assert_png(data: bytes, min_size: tuple[int, int] = (800, 400)) -> None:
    """`data` is a PNG that opens, at least `min_size` pixels."""
    from PIL import Image

    assert data[:8] == PNG_MAGIC
    with Image.open(io.BytesIO(data)) as im:
        assert im.size[0] >= min_size[0] and im.size[1] >= min_size[1], im.size


# ---------------------------------------------------------------- chart inputs


def chip(analysis: pipeline.Analysis, name: str) -> dict:
    """The catalog record of a chip the analysis used."""
    return next(h for h in analysis.hardware if h["name"] == name)


def chart_rows(analysis: pipeline.Analysis, hardware: str | None = None) -> pd.DataFrame:
    """What the chart data reads (the results' columns and the facts), every row or one chip's."""
    from pipeline.summary.grids import chart_frame

    frame = chart_frame(analysis)
    return frame if hardware is None else frame[frame["hardware"] == hardware]


def planned_charts(analysis: pipeline.Analysis) -> list:
    """The PlannedCharts a run of the analysis draws (each with its build())."""
    from pipeline.render.charts import plan_charts
    from pipeline.summary.turns import sweep_lines

    s, rows = analysis.summary, chart_rows(analysis)
    return plan_charts(rows, list(analysis.hardware), s.per_hardware, s.overrides,
                       grids=s.grids, roofs=s.roofs, lines=sweep_lines(rows))  # fmt: skip


# 20,000 scenarios on four chips, the tpu-v5e sweep too big for its HBM: a big run
BIG = """name,op,B,D,F,hardware
fit_v5p,matmul,1..5000,4096,4096,v5p
fit_h100,matmul,1..5000,4096,4096,h100
fit_v6e,matmul,1..5000,8192,8192,v6e
huge_v5e,matmul,1..5000,98304,98304,v5e
"""

# matmuls (one derated) and collective sweeps of bytes on two chips: the collective charts
MIX = [
    {"name": "mm", "op": "matmul", "B": "4096", "D": "8192", "F": "8192", "hardware": "v5e"},
    {"name": "mm_derated", "op": "matmul", "B": "4096", "D": "8192", "F": "8192",
     "hardware": "v5e", "compute_efficiency": "0.9", "hbm_efficiency": "0.85"},
    {"name": "ag", "op": "all_gather", "bytes": "1000..1000000000*10", "chips": "16",
     "hardware": "v5e"},
    {"name": "ar", "op": "all_reduce", "bytes": "1000..1000000000*10", "chips": "8",
     "hardware": "h100"},
]  # fmt: skip

# two runs on the batch index page, the second with hostile names
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


# ---------------------------------------------------------------- processes (Linux /proc)


def _processes() -> dict[int, tuple[str, int]]:
    """Every process: (state, parent id), by id."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended while we looked
        found[int(stat.parent.name)] = (fields[0], int(fields[1]))
    return found


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    return [p for p, (state, parent) in _processes().items() if parent == pid and state != "Z"]


def descendants(pid: int) -> set[int]:
    """Every live process whose parent chain leads to `pid`."""
    parents = {p: parent for p, (state, parent) in _processes().items() if state != "Z"}
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids) -> set[int]:
    """Those of `pids` still running (a zombie has ended)."""
    processes = _processes()
    return {p for p in pids if p in processes and processes[p][0] != "Z"}


# ---------------------------------------------------------------- big mixed scenario files

CHIPS = ["tpu-v3", "tpu-v4p", "v5e", "tpu-v5p", "v6e", "tpu7x", "a100", "h100", "h200", "b200",
         "gb200", "v5p"]  # fmt: skip
OPS = ["matmul", "matmul", "matmul", "dot", "batched_matmul", "BSD,DF->BSF", "custom"]
DTYPES = ["bf16", "bf16", "int8", "fp32", "fp16"]


def mixed_scenarios(rows: int, seed: int = 0) -> pd.DataFrame:
    """A frame of `rows` valid scenarios: several ops, dtypes, sharded rows, a dozen chips."""
    rng = np.random.default_rng(seed)
    pow2 = lambda lo, hi: 2 ** rng.integers(lo, hi, rows)  # noqa: E731
    op = rng.choice(OPS, rows)
    hw = rng.choice(CHIPS, rows)
    gpu = np.isin(hw, ["a100", "h100", "h200", "b200", "gb200"])
    dtype = rng.choice(DTYPES, rows)
    dtype = np.where((dtype == "fp32") & ~gpu, "bf16", dtype)  # TPUs have no fp32 MXU peak here
    dtype = np.where((dtype == "fp16") & ~gpu, "bf16", dtype)
    dtype = np.where((dtype == "int8") & (hw == "tpu7x"), "bf16", dtype)  # Ironwood: fp8, no int8
    chips = np.where(rng.random(rows) < 0.3, rng.choice([2, 4, 8, 16], rows), 1)
    sharded = (chips > 1) & (op != "custom")
    shard = np.where(sharded, rng.choice(["D", "F"], rows), "")
    shard = np.where(sharded & (op == "dot"), "N", shard)
    shard = np.where(sharded & (op == "batched_matmul"), "D", shard)
    chips = np.where(op == "custom", 1, chips)
    return pd.DataFrame(
        {
            "name": [f"s{i}" for i in range(rows)],
            "op": op,
            "B": pow2(0, 12),
            "S": pow2(0, 6),
            "D": pow2(8, 15),
            "F": pow2(8, 15),
            "N": pow2(10, 24),
            "hardware": hw,
            "dtype": dtype,
            "chips": chips,
            "shard": shard,
            "flops": np.where(op == "custom", 1e12, np.nan),
            "bytes": np.where(op == "custom", 1e9, np.nan),
            "notes": np.where(rng.random(rows) < 0.1, "nightly sweep, batch A", ""),
        }
    )


def write_mixed_scenarios(rows: int, path: Path) -> Path:
    """mixed_scenarios(rows) as a scenario CSV at `path`."""
    mixed_scenarios(rows).to_csv(path, index=False)
    return path


# ---------------------------------------------------------------- scenario checks, unit by unit


def coded(*cells: str):
    """Cells coded as the checks code a file's column (scenarios.coded.Col)."""
    import pyarrow as pa

    from pipeline.scenarios.coded import Col

    return Col.from_arrow(pa.array(cells, type=pa.string()))


def with_chip(catalog: Catalog, name: str, like: str = "tpu-v5e", **fields) -> Catalog:
    """The catalog with one more chip: a copy of `like` with `fields` changed."""
    chips = catalog.chips.copy()
    chips.loc[name] = chips.loc[like]
    for column, value in fields.items():
        chips.at[name, column] = value
    return replace(catalog, chips=chips, aliases={**catalog.aliases, name: name})


def op_columns(*ops: str):
    """(signatures, op names) as the checks hold them, for ops cells ("" for a bad op)."""
    from pipeline.model.ops import parse_op

    sig = coded(*ops).derive(lambda text: parse_op(text) if text else None)
    return sig, sig.derive(lambda s: s.op if s else "")


def write_sheet(path: Path, rows: list[list], title: str = "Scenarios", *more_sheets: str) -> Path:
    """A workbook at `path` whose first sheet, `title`, holds `rows` (the header first), with
    more sheets after it, each holding one line ("nothing", "here")."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = title
    for row in rows:
        sheet.append(row)
    for name in more_sheets:
        book.create_sheet(name).append(["nothing", "here"])
    book.save(path)
    return path


MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_NS = "http://schemas.openxmlformats.org/package/2006/relationships"


def cells_xml(rows: list[list], first: int = 1) -> str:
    """`<row>` elements for sheet data: text as inline strings, numbers as numbers, None
    skipped, and `bytes` taken as a cell's own XML (`b'<c r="B2" t="e"><v>#N/A</v></c>'`)."""
    from xml.sax.saxutils import escape

    out = []
    for r, values in enumerate(rows, start=first):
        cells = []
        for c, v in enumerate(values):
            at = f"{_column_letters(c)}{r}"
            if v is None:
                continue
            if isinstance(v, bytes):
                cells.append(v.decode("utf-8"))
            elif isinstance(v, str):
                cells.append(f'<c r="{at}" t="inlineStr"><is><t>{escape(v)}</t></is></c>')
            else:
                cells.append(f'<c r="{at}"><v>{v!r}</v></c>')
        out.append(f'<row r="{r}">{"".join(cells)}</row>')
    return "".join(out)


def _column_letters(col: int) -> str:
    letters = ""
    col += 1
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def raw_workbook(
    path: Path,
    sheets: dict[str, str | bytes],
    strings: list[str] | bytes | None = None,
    parts: dict[str, bytes | None] | None = None,
    hidden: tuple[str, ...] = (),
) -> Path:
    """A workbook written part by part, so its XML can be anything a test needs: `sheets`
    {name: its rows (str, wrapped in <worksheet><sheetData>) or its whole part (bytes)}, in
    xl/worksheets/sheet1.xml, sheet2.xml, ...; `strings`: the shared strings (texts, or the
    part's bytes); `parts`: members added or replaced by zip name (None: left out);
    `hidden`: the names of sheets marked hidden."""
    import zipfile
    from xml.sax.saxutils import escape, quoteattr

    members: dict[str, bytes | None] = {
        "[Content_Types].xml": (
            b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxml'
            b'formats.org/package/2006/content-types"><Default Extension="xml" ContentType='
            b'"application/xml"/></Types>'
        ),
        "_rels/.rels": (
            f'<Relationships xmlns="{_PKG_NS}"><Relationship Id="rId1" Type="{_REL_NS}/'
            'officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ).encode(),
    }
    entries, rels = [], []
    for i, (name, xml) in enumerate(sheets.items(), start=1):
        state = ' state="hidden"' if name in hidden else ""
        entries.append(f'<sheet name={quoteattr(name)} sheetId="{i}"{state} r:id="rId{i}"/>')
        rels.append(
            f'<Relationship Id="rId{i}" Type="{_REL_NS}/worksheet" '
            f'Target="worksheets/sheet{i}.xml"/>'
        )
        if isinstance(xml, str):
            xml = f'<worksheet xmlns="{MAIN_NS}"><sheetData>{xml}</sheetData></worksheet>'
        members[f"xl/worksheets/sheet{i}.xml"] = xml.encode() if isinstance(xml, str) else xml
    members["xl/workbook.xml"] = (
        f'<workbook xmlns="{MAIN_NS}" xmlns:r="{_REL_NS}"><sheets>{"".join(entries)}</sheets>'
        "</workbook>"
    ).encode()
    members["xl/_rels/workbook.xml.rels"] = (
        f'<Relationships xmlns="{_PKG_NS}">{"".join(rels)}</Relationships>'
    ).encode()
    if isinstance(strings, list):
        items = "".join(f"<si><t>{escape(t)}</t></si>" for t in strings)
        strings = f'<sst xmlns="{MAIN_NS}">{items}</sst>'.encode()
    if strings is not None:
        members["xl/sharedStrings.xml"] = strings
    members.update(parts or {})
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            if data is not None:
                archive.writestr(name, data)
    return path


# three made-up chips whose every figure is known, for the side-by-side table and its text
CHIP_TRIO = pd.DataFrame(
    [
        dict(name="alpha", vendor="acme", architecture="a1", peak_bf16=1.0e15, peak_fp8=2.0e15,
             hbm_capacity=8.0e10, hbm_bandwidth=2.0e12, default_link="nvlink",
             nvlink_bandwidth=4.5e11, nvlink_topology="switch", nvlink_latency=6e-7,
             nvlink_reach=8),
        dict(name="beta", vendor="acme", peak_bf16=5.0e14, peak_fp32=5.0e13, hbm_bandwidth=1.0e12,
             hbm_capacity=3.2e10, default_link="ici", ici_bandwidth=1.0e11, ici_topology="ring",
             ici_latency=1e-6, ici_reach=256, as_of="2025-01-02"),
        dict(name="gamma", aliases="g3", peak_bf16=2.0e14, hbm_bandwidth=4.0e11),
    ]
)  # fmt: skip


# compute, HBM efficiency and overhead of measured_rows' times
TRUE_CALIBRATION = {"matmul": (0.8, 0.7, 2e-6), "custom": (0.6, 0.9, 5e-6)}


def measured_rows(n: int = 60, seed: int = 0) -> pd.DataFrame:
    """Matmul and custom rows on an H100 whose measured times are the roofline's at
    TRUE_CALIBRATION's efficiencies plus its overhead, with 3 % noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        b, d, f = (int(2 ** rng.uniform(lo, hi)) for lo, hi in ((0, 12), (8, 14), (8, 15)))
        rows.append({"name": f"m{i}", "op": "matmul", "hardware": "h100", "B": b, "D": d, "F": f})
        rows.append({"name": f"c{i}", "op": "custom", "hardware": "h100",
                     "flops": float(2 ** rng.uniform(20, 40)),
                     "bytes": float(2 ** rng.uniform(16, 32))})  # fmt: skip
    frame = pd.DataFrame(rows)
    r = pipeline.analyze(frame).results
    kind = np.where(r["op"] == "custom", "custom", "matmul")
    e_c, e_h, over = (np.array([TRUE_CALIBRATION[k][i] for k in kind]) for i in range(3))
    t = np.maximum(r["t_math"] / e_c, r["t_hbm"] / e_h) + over
    frame["measured_seconds"] = (t * rng.lognormal(0, 0.03, len(t))).to_numpy()
    return frame


def figure_texts(fig) -> list[str]:
    """Every text of a figure: its own, its axes' titles, labels and texts, its legends'."""
    found = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        found += [ax.get_title(loc=loc) for loc in ("left", "center", "right")]
        found += [ax.get_xlabel(), ax.get_ylabel(), *(t.get_text() for t in ax.texts)]
        if ax.get_legend():
            found += [t.get_text() for t in ax.get_legend().get_texts()]
    for legend in fig.legends:
        found += [t.get_text() for t in legend.get_texts()] + [legend.get_title().get_text()]
    return [t for t in found if t]


# Small hand-made PyTorch profiler traces (Chrome trace JSON, as Kineto writes it): ops,
# launches and the GPU work they start, for tests/traces and tests/cli/test_traces.py
TORCH_BF16 = "c10::BFloat16"


def trace_op(name, ts, dur, dims=None, types=None, tid=1, inputs=None) -> dict:
    args = {"External id": 1}
    if dims is not None:
        args["Input Dims"] = dims
        args["Input type"] = types if types is not None else [TORCH_BF16] * len(dims)
    if inputs is not None:
        args["Concrete Inputs"] = inputs
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 7, "tid": tid, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def trace_launch(ts, link, tid=1, name="cudaLaunchKernel", cat="cuda_runtime", key="correlation"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 7, "tid": tid, "ts": ts, "dur": 1,
            "args": {key: link}}  # fmt: skip


def trace_kernel(link, dur, cat="kernel", device=0, key="correlation") -> dict:
    return {"ph": "X", "cat": cat, "name": f"gemm_{link}", "pid": 0, "tid": 7, "ts": 5000 + link,
            "dur": dur, "args": {key: link, "device": device}}  # fmt: skip


def trace_gemm(name, ts, dims, link, dur, tid=1, types=None) -> list[dict]:
    """One GEMM call that launches one kernel of `dur` µs."""
    return [
        trace_op(name, ts, 10, dims, types, tid=tid),
        trace_launch(ts + 5, link, tid=tid),
        trace_kernel(link, dur),
    ]


def write_trace(path: Path, events, device="NVIDIA H100 80GB HBM3", packed=False, **top) -> Path:
    """The trace with `events`, its device (an id 0, or (id, name) pairs) and top-level keys."""
    devices = [(0, device)] if isinstance(device, str) else device
    body = {"schemaVersion": 1, "record_shapes": 1, **top,
            "deviceProperties": [{"id": i, "name": n, "numSms": 132} for i, n in devices],
            "traceEvents": events}  # fmt: skip
    text = json.dumps(body, indent=1)
    if packed:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


# ---------------------------------------------------------------- the serving answer

# per chip: HBM bandwidth (B/s), HBM capacity (B), bf16 peak (FLOP/s); fp8 doubles the peak
SERVING_CHIPS = {"h100": (3.35e12, 80e9, 989e12), "h200": (4.8e12, 141e9, 989e12),
                 "b200": (8e12, 180e9, 2.25e15), "mi300x": (5.3e12, 192e9, 1.307e15)}  # fmt: skip
MISSES = ("ttft", "tpot", "memory")  # a serve point's `miss` codes, in their order
# per model: parameters, KV cache elements per token (2·L·K·H)
SERVING_MODELS = {"llama3-70b": (70.6e9, 163_840), "mixtral-8x7b": (46.7e9, 65_536)}


def serving_frames(
    batches=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
    tpot_target=0.015,
    ttft_target=0.06,
    prices: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(Summary.serving, Summary.serving_curves) as the contract of issue 43 lays them out,
    for a serve series per model (isl 2,048, osl 256) over 4 chips × bf16|fp8 × 4|8 chips and
    a B sweep, timed by the book's decode bound (max((weights + B·KV)/BW, 2·B·params/FLOPs)
    per chip); `prices` (chip -> USD per chip-hour) adds issue 44's cost columns."""
    isl, osl = 2048, 256
    grid = pd.MultiIndex.from_product(
        [list(SERVING_MODELS), list(SERVING_CHIPS), ["bf16", "fp8"], [4, 8], list(batches)],
        names=["series", "hardware", "dtype", "chips", "B"],
    ).to_frame(index=False)
    params = grid["series"].map(lambda m: SERVING_MODELS[m][0])
    kv = grid["series"].map(lambda m: SERVING_MODELS[m][1])
    bw, cap, peak = (grid["hardware"].map(lambda h, i=i: SERVING_CHIPS[h][i]) for i in range(3))
    width = np.where(grid["dtype"] == "fp8", 1.0, 2.0)
    peak = peak * (2.0 / width)
    weights, chips, b = params * width, grid["chips"], grid["B"]
    s = isl + osl // 2
    tpot = np.maximum(
        (weights + b * kv * width * s) / (chips * bw), 2 * b * params / (chips * peak)
    )
    ttft = np.maximum(2 * params * isl / (chips * peak), weights / (chips * bw))
    fits = (weights + b * kv * width * (isl + osl)) / chips <= cap
    frame = grid.assign(
        model=grid["series"], kv_dtype=grid["dtype"], isl=isl, osl=osl, ttft=ttft, tpot=tpot,
        request_latency=ttft + (osl - 1) * tpot, tokens_per_second_per_chip=b / (tpot * chips),
        tokens_per_second_per_user=1 / tpot, ttft_target=ttft_target, tpot_target=tpot_target,
        fits=fits, time_basis="floor",
    )  # fmt: skip
    frame["config"] = frame["hardware"] + " " + frame["dtype"] + " ×" + frame["chips"].astype(str)
    slow = frame["tpot"] > tpot_target
    late = frame["ttft"] > ttft_target
    frame["meets_target"] = ~slow & ~late & frame["fits"]
    flags = zip(late, slow, ~frame["fits"], strict=True)
    frame["miss"] = [", ".join(c for c, on in zip(MISSES, f, strict=True) if on) for f in flags]
    if prices:
        hour = frame["hardware"].map(prices)
        per_chip = frame["tokens_per_second_per_chip"]
        frame["usd_per_million_tokens"] = hour / 3600 / per_chip * 1e6
        tdp = frame["hardware"].map({"h100": 700, "h200": 700, "b200": 1000, "mi300x": 750})
        frame["tokens_per_joule"] = per_chip / tdp
    curves = frame[["series", "config", "B", "tokens_per_second_per_chip",
                    "tokens_per_second_per_user", "ttft", "tpot", "meets_target", "fits",
                    *(["usd_per_million_tokens"] if prices else [])]].copy()  # fmt: skip
    key = ["series", "config"]
    # a configuration's best point: the most tokens/s per chip meeting; else the nearest miss
    # (its smallest B)
    met = frame[frame["meets_target"]].sort_values(
        "tokens_per_second_per_chip", ascending=False, kind="stable"
    )  # ties: file order
    best = met.drop_duplicates(key)
    missed = frame[~frame.set_index(key).index.isin(best.set_index(key).index)]
    nearest = missed.sort_values("B", kind="stable").drop_duplicates(key)
    best = best.sort_values(
        ["series", "tokens_per_second_per_chip"], ascending=[True, False], kind="stable"
    )
    best["rank"] = best.groupby("series").cumcount() + 1
    nearest = nearest.assign(rank=pd.NA)
    serving = pd.concat([best, nearest]).sort_values(
        ["series", "rank"], kind="stable", na_position="last"
    )
    serving = serving.sort_values("series", kind="stable").reset_index(drop=True)
    serving["rank"] = serving["rank"].astype("Int64")
    serving["meets_target"] = serving["meets_target"].astype("boolean")
    columns = ["series", "rank", "config", "model", "hardware", "dtype", "kv_dtype", "chips", "B",
               "isl", "osl", "ttft", "tpot", "request_latency", "tokens_per_second_per_chip",
               "tokens_per_second_per_user", "ttft_target", "tpot_target", "meets_target",
               "miss", "time_basis"]  # fmt: skip
    if prices:
        serving["cost_rank"] = serving.groupby("series")["usd_per_million_tokens"].rank(
            method="min").where(serving["rank"].notna()).astype("Int64")  # fmt: skip
        serving["energy_rank"] = serving.groupby("series")["tokens_per_joule"].rank(
            method="min", ascending=False).where(serving["rank"].notna()).astype("Int64")  # fmt: skip
        columns += ["usd_per_million_tokens", "tokens_per_joule", "cost_rank", "energy_rank"]
    return serving[columns], curves.reset_index(drop=True)


def report_section(name: str, html: str) -> str:
    """The report's section `<div class="{name}" id="{name}">` (Serving, Training)."""
    found = re.search(rf'<div class="{name}" id="{name}">.*?\n</div>\n', html, re.S)
    assert found, f"no {name} section"
    return found.group(0)


def row_cells(row: str) -> list[str]:
    """A report table row's cells as their text."""
    return [unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]  # fmt: skip


def sheet_alone(folder: Path, write, name: str, frame: pd.DataFrame, lang=None):
    """The sheet `name` that `write(sheet, styles, frame)` writes (Serving, Training), alone in
    a workbook in `folder`, read back with openpyxl."""
    import openpyxl

    from pipeline.i18n import use_lang
    from pipeline.render.workbook.cells import FittedSheet
    from pipeline.render.workbook.styles import Styles
    from pipeline.render.workbook.xlsx_backend import rx

    path = folder / f"{name}.xlsx"
    book = rx.Workbook(str(path))
    with use_lang(lang):
        write(FittedSheet(book.add_worksheet(name)), Styles(), frame)
    book.close()
    return openpyxl.load_workbook(path)[name]


def header_and_lines(sheet, header_row: int) -> tuple[list[str], list[dict]]:
    """A table sheet's header (0-based `header_row`) and its lines as {header: cell}."""
    rows = list(sheet.iter_rows(min_row=header_row + 1))
    head = [c.value for c in rows[0]]
    return head, [dict(zip(head, r, strict=True)) for r in rows[1:]]
