"""Rendering an analysis for people: the number formatter, tables, charts, report, workbook."""
