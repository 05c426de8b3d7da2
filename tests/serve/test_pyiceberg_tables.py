"""PyIceberg's ``RestCatalog`` on ``iceduck serve``: its writes (a staged create in a
transaction, partitioned appends, schema and partition evolution, overwrite, a
copy-on-write delete) read the same in iceduck at every snapshot, and iceduck's writes
(merge-on-read position deletes and deletion vectors) read the same in PyIceberg through
the server.

Rows are compared as normalised multisets (:mod:`tests.support.scenario_rows`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import iceduck
from iceduck.serve.server import CatalogServer
from tests.support.scenario_rows import arrow_rows, assert_same, iceduck_rows

rest = pytest.importorskip("pyiceberg.catalog.rest")


def batch(ids: range, extra: bool = False) -> pa.Table:
    columns: dict[str, Any] = {
        "id": pa.array(list(ids), pa.int64()),
        "region": pa.array([f"r{i % 3}" for i in ids], pa.string()),
        "ts": pa.array([1_700_000_000_000_000 + i * 60_000_000 for i in ids], pa.timestamp("us", tz="UTC")),
    }
    if extra:
        columns["kind"] = pa.array([None if i % 5 == 0 else f"k{i % 2}" for i in ids], pa.string())
    return pa.table(columns)


def region_schema() -> tuple[Any, Any]:
    """PyIceberg's schema of :func:`batch` (``id``, ``region``, ``ts``) and a spec on ``region``."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType

    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "region", StringType(), required=False),
        NestedField(3, "ts", TimestamptzType(), required=False),
    )
    return schema, PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))


def test_pyiceberg_writes_and_iceduck_reads_every_snapshot(server: CatalogServer, warehouse: Path) -> None:
    from pyiceberg.expressions import GreaterThanOrEqual, LessThan
    from pyiceberg.types import StringType

    catalog = rest.RestCatalog("served", uri=server.url)
    catalog.create_namespace("py")
    schema, spec = region_schema()
    # a staged create: POST .../tables with stage-create, then a commit asserting assert-create
    with catalog.create_table_transaction("py.events", schema=schema, partition_spec=spec) as txn:
        txn.append(batch(range(0, 100)))
    table = catalog.load_table("py.events")
    table.append(batch(range(100, 200)))
    with table.update_schema() as update:
        update.add_column("kind", StringType())
    with table.update_spec() as update:  # PyIceberg writes other transforms only with pyiceberg-core
        update.add_identity("kind")
    table.append(batch(range(200, 300), extra=True))
    table.overwrite(batch(range(1000, 1010), extra=True), overwrite_filter=GreaterThanOrEqual("id", 250))
    table.delete(LessThan("id", 20))

    table = catalog.load_table("py.events")
    snapshots = table.metadata.snapshots
    assert len(snapshots) >= 5
    with iceduck.connect(warehouse) as con:
        current = iceduck_rows(con, "SELECT * FROM py.events")
        assert_same("iceduck reading py.events", current, arrow_rows(table.scan().to_arrow()))
        assert len(current[1]) == 250 - 20 + 10
        for snapshot in snapshots:
            # PyIceberg reads an old snapshot with the current schema; compare its columns
            theirs = arrow_rows(table.scan(snapshot_id=snapshot.snapshot_id).to_arrow())
            ours = iceduck_rows(con, f"SELECT * FROM py.events VERSION AS OF {snapshot.snapshot_id}")
            index = [theirs[0].index(c) for c in ours[0]]
            projected = (ours[0], sorted((tuple(r[i] for i in index) for r in theirs[1]), key=repr))
            assert_same(f"iceduck at snapshot {snapshot.snapshot_id}", ours, projected)
        specs = con.execute("SELECT DISTINCT spec_id FROM py.events.files ORDER BY 1").fetchall()
    assert specs == [(0,), (1,)]


@pytest.mark.parametrize("version", [2, 3])
def test_iceduck_merge_on_read_deletes_read_by_pyiceberg(
    server: CatalogServer, warehouse: Path, version: int
) -> None:
    """v2 position-delete files and v3 deletion vectors written by iceduck on the served
    warehouse, read by PyIceberg through the server."""
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE NAMESPACE mor")
        con.execute(
            "CREATE TABLE mor.t (id BIGINT, cat STRING) USING iceberg PARTITIONED BY (bucket(3, id)) "
            f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read', "
            "'write.update.mode' = 'merge-on-read')"
        )
        con.execute("INSERT INTO mor.t SELECT i, 'c' || (i % 4) FROM range(600) r(i)")
        con.execute("DELETE FROM mor.t WHERE id % 6 = 0")
        con.execute("UPDATE mor.t SET cat = 'updated' WHERE id % 10 = 1")
        expected = iceduck_rows(con, "SELECT * FROM mor.t")
        formats = con.execute("SELECT DISTINCT file_format FROM mor.t.delete_files").fetchall()
    assert formats == [("PUFFIN" if version == 3 else "PARQUET",)]
    table = rest.RestCatalog("served", uri=server.url).load_table("mor.t")
    assert table.metadata.format_version == version
    try:
        got = arrow_rows(table.scan().to_arrow())
    except NotImplementedError as e:  # a PyIceberg that cannot read deletion vectors says so
        pytest.skip(f"PyIceberg {version=} deletes: {e}")
    assert_same(f"PyIceberg reading iceduck's v{version} deletes", got, expected)
