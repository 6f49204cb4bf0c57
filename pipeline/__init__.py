"""roofline-pipeline: batch roofline estimates ("How to Scale Your Model", ch. 1)."""

__version__ = "0.1.0"
