"""iceduck's upserts read by PyIceberg (its SQL catalog on the same ``catalog.db``) and by
DuckDB 1.5.5's Iceberg extension (``iceberg_scan`` of the metadata file, in bench/.venv).

An upsert commits equality delete files (``equality_ids`` = the identifier fields) plus the
new rows in one ``overwrite`` snapshot. Each peer must read every snapshot as iceduck does,
or refuse: a reader that ignored the equality deletes would return the replaced rows too.
DuckDB's extension reads them; PyIceberg (0.x here) refuses any scan that has equality
deletes ("PyIceberg does not yet support equality deletes"), which the test records: when a
release reads them, the refusal test fails and becomes a comparison.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from tests.support.scenario_peers import (
    duckdb_iceberg_read,
    duckdb_iceberg_unavailable,
    pyiceberg_unavailable,
)
from tests.support.scenario_rows import arrow_rows, assert_same, iceduck_rows, metadata_location
from tests.support.spark_session import CATALOG, CATALOG_DB

#: (table, format version, partition clause)
SHAPES = [("flat_v2", 2, ""), ("bucket_v2", 2, " PARTITIONED BY (bucket(4, id))"), ("flat_v3", 3, "")]


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    with iceduck.connect(tmp_path, CATALOG) as connection:
        connection.execute("CREATE NAMESPACE up")
        yield connection


def upserted(con: Connection, table: str, version: int, partition: str) -> list[int]:
    """A table after an append and two upserts (one with a key twice: the last row wins);
    its snapshot ids, oldest first."""
    t = f"up.{table}"
    con.execute(
        f"CREATE TABLE {t} (id bigint NOT NULL, k int NOT NULL, v string) USING iceberg{partition} "
        f"TBLPROPERTIES ('format-version' = '{version}')"
    )
    con.execute(f"ALTER TABLE {t} SET IDENTIFIER FIELDS id, k")
    con.execute(f"INSERT INTO {t} SELECT i, i % 2, 'a' || i FROM range(0, 20) r(i)")
    con.execute(f"INSERT OR REPLACE INTO {t} SELECT i, i % 2, 'b' || i FROM range(10, 30) r(i)")
    con.execute(f"INSERT OR REPLACE INTO {t} VALUES (3, 1, 'first'), (40, 0, 'new'), (3, 1, 'last')")
    rows = con.execute(f"SELECT snapshot_id FROM {t}.snapshots ORDER BY committed_at").fetchall()
    return [r[0] for r in rows]


def expected(con: Connection, table: str, snapshot: int) -> Any:
    return iceduck_rows(con, f"SELECT * FROM up.{table} VERSION AS OF {snapshot}")


@pytest.mark.parametrize(("table", "version", "partition"), SHAPES)
def test_pyiceberg_reads_upserts(
    con: Connection, tmp_path: Path, table: str, version: int, partition: str
) -> None:
    reason = pyiceberg_unavailable()
    if reason:
        pytest.skip(reason)
    from pyiceberg.catalog.sql import SqlCatalog

    snapshots = upserted(con, table, version, partition)
    catalog = SqlCatalog(CATALOG, uri=f"sqlite:///{tmp_path / CATALOG_DB}", warehouse=tmp_path.as_uri())
    loaded = catalog.load_table(f"up.{table}")
    first, *upserts = snapshots
    rows = arrow_rows(loaded.scan(snapshot_id=first).to_arrow())
    assert_same(f"PyIceberg {table}@{first}", rows, expected(con, table, first))
    for snapshot in upserts:  # PyIceberg 0.x refuses to plan a scan with equality deletes
        with pytest.raises(ValueError, match="does not yet support equality deletes"):
            loaded.scan(snapshot_id=snapshot).to_arrow()
    assert len(expected(con, table, snapshots[-1])[1]) == 31


@pytest.mark.parametrize(("table", "version", "partition"), SHAPES)
def test_duckdb_extension_reads_upserts(
    con: Connection, tmp_path: Path, table: str, version: int, partition: str
) -> None:
    reason = duckdb_iceberg_unavailable()
    if reason:
        pytest.skip(reason)
    snapshots = upserted(con, table, version, partition)
    location = metadata_location(tmp_path, f"up.{table}")
    assert location is not None
    for snapshot in snapshots:
        rows = arrow_rows(duckdb_iceberg_read(location, snapshot_id=snapshot))
        assert_same(f"DuckDB iceberg_scan {table}@{snapshot}", rows, expected(con, table, snapshot))
