"""Write a large mixed scenario CSV for benchmarks (not a test): the rows are
tests.helpers.mixed_scenarios, which the fault-injection tests run too."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers import CHIPS, mixed_scenarios, write_mixed_scenarios  # noqa: E402

__all__ = ["CHIPS", "generate", "write"]

generate = mixed_scenarios
write = write_mixed_scenarios

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("rows", type=int)
    parser.add_argument("path", type=Path)
    args = parser.parse_args()
    write(args.rows, args.path)
