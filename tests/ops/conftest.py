"""Fixtures of the operation tests: a fresh warehouse with iceduck and the DuckDB reference
(``pair``), or iceduck alone with an empty namespace ``db`` (``con``; a module needing
more defines its own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection
from tests.ops.harness import Pair

#: (format version, row-level mode, partitioned)
LAYOUTS = [
    pytest.param(version, mode, partitioned, id=f"v{version}-{mode}-{'part' if partitioned else 'flat'}")
    for version in (2, 3)
    for mode in ("copy-on-write", "merge-on-read")
    for partitioned in (False, True)
]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    p = Pair(tmp_path / "wh")
    p.run("CREATE NAMESPACE ns")
    yield p
    p.close()


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    yield con
    con.close()


def create_events(pair: Pair, version: int, mode: str, partitioned: bool, name: str = "ns.t") -> str:
    """``name (id int, data string, cat string, v double)``, partitioned by ``cat`` or not,
    with ``mode`` for DELETE, UPDATE and MERGE; three inserts, so several data files."""
    partition = " PARTITIONED BY (cat)" if partitioned else ""
    props = (
        f"'format-version'='{version}', 'write.delete.mode'='{mode}', "
        f"'write.update.mode'='{mode}', 'write.merge.mode'='{mode}'"
    )
    pair.run(
        f"CREATE TABLE {name} (id INT, data STRING, cat STRING, v DOUBLE) USING iceberg{partition} "
        f"TBLPROPERTIES ({props})",
        reference=f"CREATE TABLE {name} (id INT, data VARCHAR, cat VARCHAR, v DOUBLE)",
    )
    pair.run(
        f"INSERT INTO {name} SELECT i, 'd' || i, CASE WHEN i % 3 = 0 THEN 'a' WHEN i % 3 = 1 THEN 'b' "
        "ELSE NULL END, i * 1.5 FROM range(0, 40) AS r(i)"
    )
    pair.run(f"INSERT INTO {name} VALUES (100, 'x', 'a', NULL), (101, NULL, 'c', 2.5), (102, 'z', 'c', 0.0)")
    pair.run(f"INSERT INTO {name} SELECT i, 'e' || i, 'b', NULL FROM range(200, 210) AS r(i)")
    pair.check(name)
    return name
