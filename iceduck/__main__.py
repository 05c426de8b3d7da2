"""``python -m iceduck``: the same as the ``iceduck`` command (see :mod:`iceduck.cli`).

The call is guarded so that importing the module (as tools that walk the package do) runs
nothing.
"""

import sys

from iceduck.cli import main

if __name__ == "__main__":
    sys.exit(main())
