"""`pipeline import-trace TRACE -o rows.csv`: a PyTorch profiler trace's GEMM and attention
calls as scenario rows with their measured times (pipeline/traces/)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

import pipeline
from pipeline.cli.lines import escaped
from pipeline.cli.options import LANG_OPTION, errors
from pipeline.errors import OutputError, ScenarioFileError, printable
from pipeline.i18n import _
from pipeline.textfile import atomic_file, check_file_place, refuse_existing


@click.command("import-trace")
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              required=True, help="The scenario file to write (CSV).")  # fmt: skip
@click.option("--hardware", "chip", default=None, metavar="CHIP",
              help="The chip of the rows, a name or alias of the catalog, instead of the one "
              "named by the trace's device.")  # fmt: skip
@click.option("--force", is_flag=True, help="Replace --output when there.")
@LANG_OPTION
def import_trace(trace: Path, output: Path, chip: str | None, force: bool) -> None:
    """Turn a PyTorch profiler trace (Chrome trace JSON, .json or .json.gz, recorded with
    record_shapes=True) into scenario rows with measured times.

    Each GEMM call (aten::mm, addmm, bmm, baddbmm, matmul, linear: the lowest-level one that
    launched the kernels) and each scaled dot-product attention becomes a row per op, shapes
    and dtypes: a matmul (B, D, F) or an einsum (BMK,BKN->BMN), attention a custom row of its
    FLOPs and bytes; count is the number of identical calls, measured_seconds the sum of the
    GPU kernels they launched (workspace memsets included). The chip comes from the trace's
    device name unless --hardware gives it. A closing line says the GPU time not modelled.
    Nothing of the trace's metadata is copied.

    \b
    Examples:
      pipeline import-trace trace.json.gz -o rows.csv
      pipeline run rows.csv
      pipeline calibrate rows.csv -o calibration.toml

    Exit status: 0 written; 1 an error (not a trace, no shapes, an unknown device, no GEMM).
    """
    with errors() as failed:
        rows = pipeline.import_trace(trace, hardware=chip)
        if rows.empty:
            click.echo(_closing(rows.attrs["unmodelled"]))
            raise ScenarioFileError(f"{printable(trace)}: no GEMM or attention call with shapes "
                                    "and kernels in the trace; nothing written")  # fmt: skip
        _write(rows, output, trace, force)
        chip = ", ".join(rows["hardware"].unique())
        said = (
            _("{path}: {rows} row ({chip})", path=printable(output), rows=1, chip=chip)
            if len(rows) == 1
            else _(
                "{path}: {rows} rows ({chip})", path=printable(output), rows=len(rows), chip=chip
            )
        )
        click.echo(escaped(said))
        click.echo(_closing(rows.attrs["unmodelled"]))
    sys.exit(1 if failed else 0)


def _write(rows, output: Path, trace: Path, force: bool) -> None:
    """Write atomically, never over an existing file without --force, never over the trace."""
    check_file_place(output, "rows.csv")
    if output.exists() and output.resolve() == trace.resolve():
        raise OutputError(f"{printable(output)} is the trace itself; give another name")
    refuse_existing(output, force)
    with atomic_file(output) as temp:
        rows.to_csv(temp, index=False)


def _closing(left: dict) -> str:
    ms = lambda seconds: f"{seconds * 1e3:.4g} ms"  # noqa: E731
    return _("not modelled: {seconds} of {total} GPU time ({share}); {kernels} kernels "
             "({kernel_seconds}) without a launch in the window; {graphs} CUDA-graph replays "
             "({graph_seconds}) without shapes", seconds=ms(left["seconds"]),
             total=ms(left["gpu_seconds"]), share=f"{left['share']:.1%}",
             kernels=left["kernels_without_launch"],
             kernel_seconds=ms(left["kernels_without_launch_seconds"]),
             graphs=left["graph_replays"],
             graph_seconds=ms(left["graph_replay_seconds"]))  # fmt: skip
