"""PyIceberg's SQL catalog and iceduck's SQLite catalog share one catalog.db.

"Tables written by PyIceberg (its SQL catalog on the same SQLite file) read correctly":
PyIceberg creates the file, a namespace and a partitioned v2 table and appends to it;
iceduck lists and loads exactly that. And the other way round: a catalog.db that iceduck
created is accepted by PyIceberg, which then sees what iceduck sees.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from tests.catalog.helpers import write_metadata

pytest.importorskip("sqlalchemy", reason="PyIceberg's SQL catalog needs sqlalchemy (test extra)")
sql_catalog = pytest.importorskip("pyiceberg.catalog.sql")


def pyiceberg_catalog(warehouse: Path, name: str = "iceduck") -> Any:
    return sql_catalog.SqlCatalog(
        name, uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=warehouse.as_uri()
    )


def write_events(catalog: Any) -> Any:
    """A partitioned v2 table with two appends, written by PyIceberg (identity partitions:
    PyIceberg writes other transforms only with the optional pyiceberg-core installed)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType, TimestampType

    schema = Schema(
        NestedField(1, "device_id", LongType(), required=False),
        NestedField(2, "ts", TimestampType(), required=False),
        NestedField(3, "v", StringType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(1, 1000, IdentityTransform(), "device_id"),
        PartitionField(3, 1001, IdentityTransform(), "v"),
    )
    catalog.create_namespace("analytics")
    table = catalog.create_table(
        "analytics.events", schema, partition_spec=spec, properties={"format-version": "2"}
    )
    rows = pa.table(
        {
            "device_id": pa.array([1, 2, 3], pa.int64()),
            "ts": pa.array([datetime(2024, 1, 1, h) for h in (1, 2, 3)], pa.timestamp("us")),
            "v": ["a", "b", "c"],
        }
    )
    table.append(rows)
    table.append(rows)
    return catalog.load_table("analytics.events")


def test_iceduck_reads_what_pyiceberg_wrote(tmp_path: Path) -> None:
    table = write_events(pyiceberg_catalog(tmp_path))
    pyiceberg_catalog(tmp_path, "someone_else").create_namespace("hidden")

    catalog = SqliteCatalog(tmp_path, read_only=True)
    assert catalog.list_namespaces() == [("analytics",)]
    assert catalog.list_tables(("analytics",)) == [TableIdentifier(("analytics",), "events")]
    loaded = catalog.load_table(TableIdentifier(("analytics",), "events"))

    assert loaded.metadata_location == table.metadata_location  # a file: URI, as PyIceberg stores it
    md = loaded.metadata
    assert md.format_version == 2
    assert md.current_snapshot_id == table.metadata.current_snapshot_id
    assert [s.snapshot_id for s in md.snapshots] == [s.snapshot_id for s in table.metadata.snapshots]
    assert len(md.snapshots) == 2
    assert [(f.name, str(f.transform)) for f in md.spec().fields] == [
        ("device_id", "identity"),
        ("v", "identity"),
    ]
    assert [f.name for f in md.schema().fields] == ["device_id", "ts", "v"]


def test_pyiceberg_accepts_a_catalog_iceduck_created(tmp_path: Path) -> None:
    from tests.catalog.test_sqlite import SPARK_DDL, ddl, insert

    catalog = SqliteCatalog(tmp_path)
    # a table iceduck's catalog knows (a row as Spark/iceduck write it)
    mine = write_metadata(tmp_path / "mine" / "t", "00000-a.metadata.json", 7)
    insert(tmp_path / "catalog.db", "iceberg_namespace_properties", ("iceduck", "mine", "exists", "true"))
    insert(tmp_path / "catalog.db", "iceberg_tables", ("iceduck", "mine", "t", str(mine), None, "TABLE"))

    theirs = pyiceberg_catalog(tmp_path)
    assert theirs._schema_version == "v1"  # PyIceberg saw iceberg_type: views and tables alike
    table = write_events(theirs)
    assert ddl(tmp_path / "catalog.db") == SPARK_DDL  # PyIceberg reused the tables as they are

    assert sorted(theirs.list_namespaces()) == [("analytics",), ("mine",)]
    assert theirs.list_tables("mine") == [("mine", "t")]
    assert theirs.load_table("mine.t").metadata.last_updated_ms == 7

    assert catalog.list_namespaces() == [("analytics",), ("mine",)]
    assert catalog.list_tables(("analytics",)) == [TableIdentifier(("analytics",), "events")]
    loaded = catalog.load_table(TableIdentifier(("analytics",), "events"))
    assert loaded.metadata_location == table.metadata_location
    assert loaded.metadata.current_snapshot_id == table.metadata.current_snapshot_id
