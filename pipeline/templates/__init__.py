"""The report templates (Jinja2): the package `pipeline.templates`."""
