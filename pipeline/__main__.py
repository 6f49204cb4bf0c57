"""`python -m pipeline`: the command line."""

from pipeline.cli import main

if __name__ == "__main__":
    main()
