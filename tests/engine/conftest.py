"""Engine fixtures: the read and delete tests run in both of the engine's read modes.

A scan reads the files' footers when that is cheap (at most ``PLAIN_READ_FOOTERS`` not yet
cached), which lets groups whose footers prove it be read plainly by name
(:mod:`iceduck.engine.plain_read`); a first scan of a table of many small files stays
*blind* (``schema = MAP`` by field id, no footer read). Both must return exactly the same
rows, so the modules below run every test in both modes.

``con`` is a bare DuckDB database of the engine (two threads), for the read tests that
run the engine's SQL themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from iceduck.engine import read
from iceduck.engine.connection import open_database

BOTH_READ_MODES = frozenset(
    {
        "test_read",
        "test_deletes",
        "test_plain_read",
        "test_bitmaps",
        "test_equality",
        "test_file_errors",
        "test_s3_reads",
    }
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "read_mode" in metafunc.fixturenames:
        module = metafunc.module.__name__.rsplit(".", 1)[-1]
        modes = ["footers", "blind"] if module in BOTH_READ_MODES else ["footers"]
        metafunc.parametrize("read_mode", modes, indirect=True)


@pytest.fixture(autouse=True)
def read_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``footers`` (the default) or ``blind`` (footers never read unless a projection needs
    them, as for a first scan of a table of many files)."""
    mode = getattr(request, "param", "footers")
    if mode == "blind":
        monkeypatch.setattr(read, "PLAIN_READ_FOOTERS", -1)
    yield mode


@pytest.fixture
def con() -> Iterator[Any]:
    database = open_database(threads=2)
    yield database
    database.close()
