"""Engines beyond one process."""
