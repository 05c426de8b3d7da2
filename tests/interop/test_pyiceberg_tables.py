"""Tables PyIceberg wrote (its SQL catalog on the same catalog.db) read correctly through SQL.

PyIceberg writes v1 and v2 tables, appends, overwrites with a filter (copy-on-write
deletes), evolves the schema (add, rename, int -> long promotion) and the partition spec;
iceduck's ``SELECT`` must return exactly what PyIceberg's own scan returns, for the current
snapshot and for every older one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import iceduck

sql_catalog = pytest.importorskip("pyiceberg.catalog.sql")


def _catalog(warehouse: Path) -> Any:
    return sql_catalog.SqlCatalog(
        "iceduck", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=warehouse.as_uri()
    )


def _build(warehouse: Path, format_version: int) -> Any:
    from pyiceberg.expressions import EqualTo
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField, StringType

    catalog = _catalog(warehouse)
    catalog.create_namespace("py")
    schema = Schema(
        NestedField(1, "id", IntegerType(), required=False),
        NestedField(2, "cat", StringType(), required=False),
        NestedField(3, "v", DoubleType(), required=False),
    )
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat"))
    table = catalog.create_table(
        "py.t", schema, partition_spec=spec, properties={"format-version": str(format_version)}
    )
    arrow_schema = pa.schema([("id", pa.int32()), ("cat", pa.string()), ("v", pa.float64())])
    table.append(
        pa.table(
            {"id": [1, 2, 3, 4], "cat": ["a", "a", "b", None], "v": [1.5, None, -0.0, 4.0]}, arrow_schema
        )
    )
    table.append(pa.table({"id": [5, 6], "cat": ["b", "c"], "v": [5.0, float("nan")]}, arrow_schema))
    table.delete(EqualTo("id", 2))  # copy-on-write: rewrites the file of partition cat=a
    with table.update_schema() as update:
        update.add_column("note", StringType())
        update.rename_column("v", "value")
        update.update_column("id", field_type=LongType())
    table = catalog.load_table("py.t")
    table.append(
        pa.table(
            {"id": [7], "cat": ["c"], "value": [7.0], "note": ["after evolution"]},
            pa.schema(
                [("id", pa.int64()), ("cat", pa.string()), ("value", pa.float64()), ("note", pa.string())]
            ),
        )
    )
    return catalog.load_table("py.t")


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(repr(tuple(r.values())) for r in table.to_pylist())


@pytest.mark.parametrize("format_version", [1, 2])
def test_select_equals_pyiceberg_scan_for_every_snapshot(tmp_path: Path, format_version: int) -> None:
    table = _build(tmp_path, format_version)
    con = iceduck.connect(tmp_path)
    cur = con.cursor()
    cur.execute("SELECT * FROM py.t")
    ours = cur.result.to_arrow_table()
    assert ours.column_names == ["id", "cat", "value", "note"]
    assert _rows(ours) == _rows(table.scan().to_arrow())
    assert ours.num_rows == 6  # 7 written, id 2 deleted

    snapshots = table.metadata.snapshots
    assert len(snapshots) >= 4
    for snapshot in snapshots:
        cur.execute(f"SELECT * FROM py.t VERSION AS OF {snapshot.snapshot_id}")
        expected = table.scan(snapshot_id=snapshot.snapshot_id).to_arrow()
        assert _rows(cur.result.to_arrow_table()) == _rows(expected), snapshot.snapshot_id

    cur.execute("SELECT count(*), sum(id) FROM py.t WHERE cat = 'b'")
    assert cur.fetchall() == [(2, 8)]
