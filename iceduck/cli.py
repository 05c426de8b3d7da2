"""The ``iceduck`` command.

Until the SQL shell lands (step 4), the command prints the version and, given a
warehouse folder, what iceduck finds there: enough to check an install.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from iceduck import __version__


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="iceduck", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"iceduck {__version__}")
    parser.parse_args(argv)
    print(f"iceduck {__version__}: the SQL shell is not built yet; see README.md for what works today.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
