"""iceduck's SQLite catalog over the Spark-written fixture warehouse sees what Spark sees.

Spark's JDBC catalog (schema version V1) owns the fixture's catalog.db; iceduck opens it
read-only. Namespaces, tables and each table's current snapshot must match what Spark
reports, and a catalog.db created by iceduck must have exactly the tables Spark created.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from iceduck.catalog.base import Namespace, TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from tests.catalog.test_sqlite import SPARK_DDL, ddl
from tests.support.spark_session import CATALOG
from tests.support.spark_warehouse import SparkWarehouse

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _quoted(levels: tuple[str, ...]) -> str:
    return ".".join(f"`{level}`" for level in (CATALOG, *levels))


def spark_namespaces(spark: SparkSession, parent: Namespace = ()) -> list[Namespace]:
    """Every namespace under ``parent``, recursively, as Spark lists them."""
    found: list[Namespace] = []
    for row in spark.sql(f"SHOW NAMESPACES IN {_quoted(parent)}").collect():
        namespace = (*parent, row["namespace"].split(".")[-1].strip("`"))
        found.append(namespace)
        found.extend(spark_namespaces(spark, namespace))
    return sorted(found)


def iceduck_namespaces(catalog: SqliteCatalog, parent: Namespace = ()) -> list[Namespace]:
    found: list[Namespace] = []
    for namespace in catalog.list_namespaces(parent):
        found.append(namespace)
        found.extend(iceduck_namespaces(catalog, namespace))
    return sorted(found)


def spark_main_snapshot(spark: SparkSession, table: TableIdentifier) -> int | None:
    rows = spark.sql(
        f"SELECT snapshot_id FROM {_quoted((*table.namespace, table.name, 'refs'))} WHERE name = 'main'"
    ).collect()
    return rows[0]["snapshot_id"] if rows else None


def test_ddl_of_a_new_catalog_equals_sparks(spark_warehouse: SparkWarehouse, tmp_path: Path) -> None:
    SqliteCatalog(tmp_path).close()
    assert ddl(spark_warehouse.path / "catalog.db") == SPARK_DDL
    assert ddl(tmp_path / "catalog.db") == ddl(spark_warehouse.path / "catalog.db")


def test_same_namespaces_tables_and_snapshots_as_spark(
    spark: SparkSession, spark_warehouse: SparkWarehouse
) -> None:
    db = spark_warehouse.path / "catalog.db"
    mtime = db.stat().st_mtime_ns
    catalog = SqliteCatalog(spark_warehouse.path, CATALOG, read_only=True)

    namespaces = spark_namespaces(spark)
    assert iceduck_namespaces(catalog) == namespaces
    assert {("deep",), ("deep", "er"), ("empty_ns",), ("fmt",)} <= set(namespaces)

    seen: set[str] = set()
    for namespace in namespaces:
        rows = spark.sql(f"SHOW TABLES IN {_quoted(namespace)}").collect()
        spark_tables = [TableIdentifier(namespace, r["tableName"]) for r in rows if not r["isTemporary"]]
        assert sorted(catalog.list_tables(namespace), key=str) == sorted(spark_tables, key=str), namespace
        for table in spark_tables:
            loaded = catalog.load_table(table)
            assert loaded.metadata.current_snapshot_id == spark_main_snapshot(spark, table), table
            seen.add(str(table))
    assert set(spark_warehouse.tables) <= seen
    assert catalog.load_table(TableIdentifier(("fmt",), "empty_v2")).metadata.current_snapshot_id is None

    catalog.close()
    assert db.stat().st_mtime_ns == mtime  # read-only: the shared file was not touched
