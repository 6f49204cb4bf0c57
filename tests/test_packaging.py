"""The package as a user installs it: the wheel built from this checkout (without a build
warning), installed into a fresh virtualenv outside the checkout, runs the shipped example from
another folder with every data file and template it needs; a missing data file is an error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from pipeline.catalogs import sources
from pipeline.errors import BrokenInstall
from tests.helpers import BOOK_SCENARIOS, ROOT

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="venv layout, bin/")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[Path, str]:
    """The wheel pip builds from this checkout (build isolation, as `pip install` does), and
    the build's output."""
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (found,) = out.glob("roofline_pipeline-*.whl")
    return found, built.stdout + built.stderr


def test_the_build_warns_of_nothing(wheel):
    _, log = wheel
    assert "absent from" not in log and "BuildBackendWarning" not in log, log[-3000:]


def test_the_wheel_holds_every_data_file_and_template(wheel):
    names = set(zipfile.ZipFile(wheel[0]).namelist())
    shipped = [p.relative_to(ROOT).as_posix() for p in (ROOT / "pipeline").rglob("*")
               if p.suffix in (".csv", ".j2") and "__pycache__" not in p.parts]  # fmt: skip
    assert shipped and set(shipped) <= names, sorted(set(shipped) - names)
    assert "pipeline/data/sources/nvidia.csv" in names
    assert "pipeline/templates/report.html.j2" in names
    assert not any(n.startswith(("tests/", "benchmarks/", "templates/")) for n in names)


@LINUX
def test_the_installed_wheel_runs_the_example_from_another_folder(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    # the dependencies: this environment's, by path (a .pth line adds a folder, it does not
    # run that folder's own .pth files: the checkout's editable install stays out)
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--no-deps", "--no-index", str(wheel[0])],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(BOOK_SCENARIOS, work / "example.csv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import pipeline; print(pipeline.__file__)"],
        capture_output=True, text=True, cwd=work, env=env, timeout=120,
    )  # fmt: skip
    assert where.stdout.startswith(str(site)), where.stdout + where.stderr  # not the checkout
    ran = subprocess.run(
        [str(venv / "bin" / "pipeline"), "run", "example.csv", "-o", "out", "-q"],
        capture_output=True, text=True, cwd=work, env=env, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    done = work / "out" / "example"
    for name in ("results.csv", "workbook.xlsx", "report.html", "manifest.json"):
        assert (done / name).is_file(), name
    assert "<html" in (done / "report.html").read_text(encoding="utf-8")
    listed = subprocess.run(
        [str(venv / "bin" / "pipeline"), "hardware", "h100"],
        capture_output=True, text=True, cwd=work, env=env, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "sources (each figure as printed" in listed.stdout and "scaling-book" in listed.stdout


def test_missing_sources_are_a_broken_install_not_an_empty_table(monkeypatch, tmp_path):
    monkeypatch.setattr(sources, "sources_folder", lambda: tmp_path / "gone")
    sources._shipped.cache_clear()
    try:
        with pytest.raises(
            BrokenInstall, match="sources .* are missing; a file roofline-pipeline ships: reinstall"
        ):
            sources.load_sources()
    finally:
        sources._shipped.cache_clear()


@LINUX
def test_the_editable_install_make_does_warns_of_nothing(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--no-deps", "-e", str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    said = [
        line
        for line in (installed.stdout + installed.stderr).splitlines()
        if "Warning" in line or "careful" in line or "absent from" in line
    ]
    assert said == [], "\n".join(said)


def test_a_missing_catalog_is_a_broken_install_not_a_traceback(monkeypatch, tmp_path):
    from pipeline.catalogs import hardware as catalog

    monkeypatch.setattr(catalog, "builtin_catalog_path", lambda: tmp_path / "hardware.csv")
    catalog._builtin.cache_clear()
    try:
        with pytest.raises(
            BrokenInstall,
            match=r"hardware\.csv: no such file; a file roofline-pipeline ships: reinstall it",
        ):
            catalog.load_catalog()
    finally:
        catalog._builtin.cache_clear()
