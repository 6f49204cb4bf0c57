"""The report templates (Jinja2), shipped as the package `pipeline.templates`."""
