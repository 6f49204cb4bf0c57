"""Calibrations (DESIGN.md §20): the estimate they give, their fit, their file."""
