"""The library's verbs: analyze, compare, calibrate (re-exported by pipeline/__init__.py)."""
