"""The tool's version, recorded in every manifest, workbook and report."""

__version__ = "0.2.0"
