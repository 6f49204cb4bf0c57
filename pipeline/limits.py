"""The default limits of a run (docs/outputs.md#caps)."""

DEFAULT_MAX_ROWS = 1_000_000  # scenarios a file may expand to (--max-rows)
MAX_ROWS_LIMIT = 100_000_000  # the largest --max-rows: every scenario is held in memory
DEFAULT_MAX_CHARTS = 200  # PNGs per run (--max-charts)
DEFAULT_WORKBOOK_ROWS = 100_000  # Results and Errors sheet rows (--workbook-rows)
DEFAULT_WORKBOOK_INPUT_ROWS = 10_000  # Inputs sheet rows; the scenario file has every one
DEFAULT_TABLE_ROWS = 500  # report rows per hardware table; the rest are in results.csv
# the unpacked size a workbook part read may declare (a scenario sheet's XML, its shared
# strings): python-calamine and the check before it take some 3.5 x a sheet's XML in memory,
# so this is about 1 GB at most; 100,000 scenario rows take some 30 MB of sheet XML
MAX_WORKBOOK_PART = 256 << 20
