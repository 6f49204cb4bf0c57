"""Scenario sheets of .xlsx workbooks, read within budgets."""
