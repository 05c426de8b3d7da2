"""Imported first by every benchmark script: puts this checkout's root ahead of any installed
iceduck on ``sys.path``, so ``python3 bench/run.py`` measures the code next to it.

Why: Python puts the script's folder (``bench/``) first on the path, not the checkout's root,
so without this a benchmark run from a second checkout (or with iceduck installed from PyPI)
would time whichever iceduck is installed, and its figures would belong to other code.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])
if sys.path[:1] != [ROOT]:
    sys.path.insert(0, ROOT)
