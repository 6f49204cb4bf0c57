"""The catalogs: hardware and LLMs, their sources, spellings and checks."""
