"""render.charts' entry points: figure() draws each kind of chart data, and matplotlib is
imported only when a chart is drawn (`import pipeline`, `pipeline hardware` and a Dask
worker never pay for it)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from matplotlib.figure import Figure

import pipeline
from pipeline.render.charts import figure, png
from pipeline.render.charts.summary_data import summary_data
from tests.helpers import BOOK_SCENARIOS, ROOT


def _imported_after(code: str) -> set[str]:
    """The matplotlib modules a fresh interpreter holds after running `code`."""
    probe = (
        f"{code}\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith('matplotlib')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


@pytest.mark.parametrize(
    "code",
    [
        "import pipeline",
        "import pipeline.render.charts",
        "import pipeline.cli",
        "from pipeline.cli import cli\n"
        "from click.testing import CliRunner\n"
        "assert CliRunner().invoke(cli, ['hardware', 'h100']).exit_code == 0",
    ],
)
def test_nothing_draws_nothing_imports_matplotlib(code):
    assert _imported_after(code) == set()


def test_the_charts_facade_and_the_dask_engine_come_when_asked_for():
    assert "matplotlib.figure" in _imported_after("import pipeline\npipeline.charts")
    assert _imported_after("import pipeline\npipeline.run_dask") == set()
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        pipeline.nothing  # noqa: B018
    assert "charts" in dir(pipeline) and "run_dask" in dir(pipeline)


def test_figure_draws_chart_data_and_png_is_its_bytes():
    analysis = pipeline.analyze(BOOK_SCENARIOS)
    data = summary_data(analysis.summary.per_hardware)
    assert isinstance(figure(data), Figure)
    assert png(data).startswith(b"\x89PNG\r\n\x1a\n")
    assert png(data) == png(data)  # the same data, the same bytes
    with pytest.raises(TypeError, match="no chart for str"):
        figure("not chart data")
