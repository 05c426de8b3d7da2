"""``python -m iceduck``: the same as the ``iceduck`` command (see :mod:`iceduck.cli`)."""

import sys

from iceduck.cli import main

sys.exit(main())
