"""Facts in words: answer lines, catalog and fleet text, the steps table."""
