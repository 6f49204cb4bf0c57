"""`python -m pipeline`: the command line."""

from pipeline.cli import cli

if __name__ == "__main__":
    cli()
