"""workbook.xlsx and the starter workbook: sheets, cells, styles, writers."""
