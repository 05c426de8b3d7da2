"""Upserted tables read by the other readers: DuckDB's Iceberg extension (1.5.5) reads the
equality deletes and returns iceduck's rows, at every snapshot; PyIceberg (0.12) refuses
equality deletes with its own error rather than returning wrong rows, and reads the table
equal once it is compacted."""

from __future__ import annotations

from pathlib import Path

import pytest

import iceduck
from tests.support.scenario_peers import (
    duckdb_iceberg_read,
    duckdb_iceberg_unavailable,
    pyiceberg_reader,
    pyiceberg_unavailable,
)
from tests.support.scenario_rows import arrow_rows, assert_same, iceduck_rows, metadata_location


def _upserted(warehouse: Path, version: int, partition: str) -> iceduck.Connection:
    con = iceduck.connect(warehouse)
    con.execute("CREATE NAMESPACE IF NOT EXISTS ns")
    con.execute(
        f"CREATE TABLE ns.t (id BIGINT NOT NULL, cat STRING NOT NULL, v DOUBLE){partition} "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.upsert.enabled'='true')"
    )
    con.execute("ALTER TABLE ns.t SET IDENTIFIER FIELDS id, cat")
    con.execute(
        "INSERT INTO ns.t SELECT i, CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END, i / 2 FROM range(50) r(i)"
    )
    con.execute("INSERT INTO ns.t VALUES (3, 'a', -1), (4, 'b', -2), (4, 'b', -3), (60, 'a', 6)")
    con.execute("DELETE FROM ns.t WHERE (id, cat) IN ((5, 'b'), (6, 'a'))")
    return con


LAYOUTS = [
    pytest.param(2, "", id="v2"),
    pytest.param(3, " PARTITIONED BY (cat, bucket(4, id))", id="v3-partitioned"),
]


@pytest.mark.parametrize(("version", "partition"), LAYOUTS)
def test_duckdb_extension_reads_upserts(tmp_path: Path, version: int, partition: str) -> None:
    reason = duckdb_iceberg_unavailable()
    if reason:
        pytest.skip(reason)
    con = _upserted(tmp_path, version, partition)
    location = metadata_location(tmp_path, "ns.t")
    assert location is not None
    assert_same("now", arrow_rows(duckdb_iceberg_read(location)), iceduck_rows(con, "SELECT * FROM ns.t"))
    for (snapshot,) in con.execute("SELECT snapshot_id FROM ns.t.snapshots").fetchall():
        theirs = arrow_rows(duckdb_iceberg_read(location, snapshot_id=snapshot))
        assert_same(
            f"at {snapshot}", theirs, iceduck_rows(con, f"SELECT * FROM ns.t VERSION AS OF {snapshot}")
        )


def test_pyiceberg_refuses_equality_deletes_then_reads_the_compacted_table(tmp_path: Path) -> None:
    reason = pyiceberg_unavailable()
    if reason:
        pytest.skip(reason)
    con = _upserted(tmp_path, 2, " PARTITIONED BY (cat)")
    read = pyiceberg_reader(tmp_path)
    with pytest.raises(ValueError, match="does not yet support equality deletes"):
        read("ns.t")
    con.execute("CALL system.rewrite_data_files(table => 'ns.t', options => map('rewrite-all', 'true'))")
    assert_same("compacted", arrow_rows(read("ns.t")), iceduck_rows(con, "SELECT * FROM ns.t"))
