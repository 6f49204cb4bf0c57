"""A fresh Jupyter kernel (nbclient) shows an Analysis as HTML and a chart as a PNG, with no
magic and no pyplot: what a notebook user sees, end to end."""

from __future__ import annotations

import base64

import nbformat
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient

import pipeline
from tests.helpers import BOOK_SCENARIOS, ROOT

KERNEL = "roofline-test"
CELLS = (
    'import pipeline\na = pipeline.analyze("scenarios/q1-q5.csv")\na',
    'pipeline.charts.sweep(a, "v5e", "B")',
    'import sys\n"matplotlib.pyplot" in sys.modules',
)


def _run(cells, tmp_path, monkeypatch) -> list[list[dict]]:
    """Each cell's outputs, run in a new kernel of this interpreter from the project folder."""
    # a kernel spec of our own, and empty Jupyter/IPython folders: no kernel, profile or
    # startup file of the machine's (a `%matplotlib inline` in one) takes part
    write_kernel_spec(tmp_path / "jupyter" / "kernels" / KERNEL)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.delenv("MPLBACKEND", raising=False)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=120,  # a hang guard, not a benchmark: the three cells take a few seconds
        startup_timeout=120,
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute()
    return [cell.outputs for cell in notebook.cells]


def test_a_fresh_kernel_shows_the_analysis_and_the_chart(tmp_path, monkeypatch):
    analysis, chart, pyplot = _run(CELLS, tmp_path, monkeypatch)
    assert [o["output_type"] for o in analysis] == ["execute_result"]
    html = analysis[0]["data"]["text/html"]
    assert "Analysis of <code>scenarios/q1-q5.csv</code>" in html
    assert "1,035 scenarios on 3 chips, 0 rejected rows, 0 warnings" in html
    assert [o["output_type"] for o in chart] == ["execute_result"]
    shown = base64.b64decode(chart[0]["data"]["image/png"])
    a = pipeline.analyze(BOOK_SCENARIOS)
    assert shown == pipeline.charts.sweep(a, "v5e", "B")._repr_png_()[0]  # the run's PNG
    assert chart[0]["metadata"]["image/png"] == {"width": 800}
    assert pyplot[0]["data"]["text/plain"] == "False"  # shown by the figure itself
