"""Run-over-run changes (DESIGN.md §9): matched rows, their causes, their groups."""
