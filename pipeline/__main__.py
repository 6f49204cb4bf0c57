"""`python -m pipeline` and the `pipeline` console command: the command line, then a prompt
exit."""

import os
import sys

from pipeline.cli import cli


def main() -> None:
    """The console entry point (`pipeline`, `python -m pipeline`): the command, then a prompt
    exit. Once the command returns, its outputs are renamed into place and its files closed;
    what is left is Python's teardown of pandas, pyarrow and matplotlib (0.2 s measured on a
    small run), which holds nothing to save. So the streams are flushed and the process ends
    with the command's status, without it. An unexpected exception still propagates."""
    try:
        cli()
        status = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            status = exc.code or 0
        else:  # sys.exit("message"), as Python would print it
            print(exc.code, file=sys.stderr)
            status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`): nothing more to say
            status = status or 1
    os._exit(status)


if __name__ == "__main__":
    main()
