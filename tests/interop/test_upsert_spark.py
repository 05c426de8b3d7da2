"""iceduck's upserts (equality deletes plus rows) read back by Spark 3.5 + Iceberg 1.10 at
every snapshot, Spark writing on top of them, compaction by either engine, and Spark's
``create_changelog_view`` against iceduck's ``table_changes``.

Tables live in namespace ``upserts`` of the fixture warehouse (dropped first), which Spark
sees through its ``iceduck`` JDBC catalog.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.ops.harness import Iceduck
from tests.support.namespaces import drop_namespace_with_tables
from tests.support.scenario_rows import assert_same, iceduck_rows, spark_rows

NS = "upserts"


@pytest.fixture(scope="module")
def ice(spark: Any, spark_warehouse: Any) -> Iterator[Iceduck]:
    engine = Iceduck(spark_warehouse.path)
    drop_namespace_with_tables(engine.con.session.catalog, NS)
    engine.execute(f"CREATE NAMESPACE {NS}")
    yield engine
    engine.close()


def _same_everywhere(spark: Any, ice: Iceduck, table: str) -> None:
    """Spark and iceduck return the same rows now and at every snapshot."""
    query = f"SELECT * FROM {NS}.{table}"
    assert_same(query, iceduck_rows(ice.con, query), spark_rows(spark, f"SELECT * FROM iceduck.{NS}.{table}"))
    for (snapshot,) in ice.fetch(f"SELECT snapshot_id FROM {NS}.{table}.snapshots"):
        at = f"{query} VERSION AS OF {snapshot}"
        spark_at = f"SELECT * FROM iceduck.{NS}.{table} VERSION AS OF {snapshot}"
        assert_same(at, iceduck_rows(ice.con, at), spark_rows(spark, spark_at))


LAYOUTS = [
    pytest.param(2, "", ("id",), id="v2-unpartitioned"),
    pytest.param(3, "", ("id",), id="v3-unpartitioned"),
    pytest.param(2, " PARTITIONED BY (bucket(4, id))", ("id",), id="v2-bucket"),
    pytest.param(3, " PARTITIONED BY (id)", ("id",), id="v3-identity"),
    pytest.param(2, " PARTITIONED BY (cat)", ("id", "cat"), id="v2-two-field-key"),
]


@pytest.mark.parametrize(("version", "partition", "key"), LAYOUTS)
def test_spark_reads_upserts_deletes_by_key_and_feed_merges(
    spark: Any, ice: Iceduck, version: int, partition: str, key: tuple[str, ...]
) -> None:
    table = f"u{version}_{len(key)}_{abs(hash(partition)) % 1000}"
    ice.execute(
        f"CREATE TABLE {NS}.{table} (id BIGINT NOT NULL, data STRING, cat STRING NOT NULL){partition} "
        f"TBLPROPERTIES ('format-version'='{version}')"
    )
    ice.execute(f"ALTER TABLE {NS}.{table} SET IDENTIFIER FIELDS {', '.join(key)}")
    ice.execute(
        f"INSERT INTO {NS}.{table} SELECT i, 'd' || i, CASE WHEN i % 2 = 0 THEN 'e' ELSE 'o' END "
        "FROM range(30) r(i)"
    )
    ice.execute(
        f"INSERT OR REPLACE INTO {NS}.{table} VALUES "
        "(1, 'one', 'o'), (2, 'two', 'e'), (2, 'TWO', 'e'), (40, 'new', 'e')"
    )
    _same_everywhere(spark, ice, table)
    ice.execute(f"ALTER TABLE {NS}.{table} SET TBLPROPERTIES ('write.upsert.enabled'='true')")
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (3, 'three', 'o'), (41, 'newer', 'o')")
    where = "id IN (4, 6)" if key == ("id",) else "(id, cat) IN ((4, 'e'), (6, 'e'))"
    ice.execute(f"DELETE FROM {NS}.{table} WHERE {where}")
    ice.execute(f"CREATE OR REPLACE TABLE {NS}.{table}_feed (id BIGINT, data STRING, cat STRING, op STRING)")
    ice.execute(
        f"INSERT INTO {NS}.{table}_feed VALUES "
        "(5, NULL, 'o', 'D'), (7, 'seven', 'o', 'U'), (50, 'fifty', 'e', 'I')"
    )
    on = " AND ".join(f"t.{k} = s.{k}" for k in key)
    ice.execute(
        f"MERGE INTO {NS}.{table} t USING {NS}.{table}_feed s ON {on} "
        "WHEN MATCHED AND s.op = 'D' THEN DELETE WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT *"
    )
    deletes = ice.fetch(f"SELECT DISTINCT content FROM {NS}.{table}.delete_files")
    assert deletes == [(2,)]  # everything was written by key
    _same_everywhere(spark, ice, table)
    spark_deletes = spark.sql(f"SELECT DISTINCT content FROM iceduck.{NS}.{table}.delete_files").collect()
    assert [r[0] for r in spark_deletes] == [2]


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_spark_writes_on_top_of_upserts(spark: Any, ice: Iceduck, mode: str) -> None:
    table = f"spark_on_top_{mode.replace('-', '_')}"
    ice.execute(
        f"CREATE TABLE {NS}.{table} (id BIGINT NOT NULL, data STRING) PARTITIONED BY (bucket(2, id)) "
        f"TBLPROPERTIES ('write.delete.mode'='{mode}', 'write.update.mode'='{mode}', "
        f"'write.merge.mode'='{mode}')"
    )
    ice.execute(f"ALTER TABLE {NS}.{table} SET IDENTIFIER FIELDS id")
    ice.execute(f"INSERT INTO {NS}.{table} SELECT i, 'd' || i FROM range(20) r(i)")
    ice.execute(f"INSERT OR REPLACE INTO {NS}.{table} VALUES (3, 'x'), (4, 'y'), (25, 'z')")
    spark.sql(f"DELETE FROM iceduck.{NS}.{table} WHERE id > 15")
    spark.sql(f"UPDATE iceduck.{NS}.{table} SET data = 'spark' WHERE id IN (2, 3)")
    spark.sql(
        f"MERGE INTO iceduck.{NS}.{table} t USING (SELECT 4L AS id, 'merged' AS data) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    _same_everywhere(spark, ice, table)
    ice.execute(f"INSERT OR REPLACE INTO {NS}.{table} VALUES (2, 'ice')")
    _same_everywhere(spark, ice, table)


def test_compaction_by_either_engine(spark: Any, ice: Iceduck) -> None:
    for engine in ("spark", "iceduck"):
        table = f"compact_{engine}"
        ice.execute(
            f"CREATE TABLE {NS}.{table} (id BIGINT NOT NULL, data STRING) PARTITIONED BY (bucket(2, id))"
        )
        ice.execute(f"ALTER TABLE {NS}.{table} SET IDENTIFIER FIELDS id")
        ice.execute(f"INSERT INTO {NS}.{table} SELECT i, 'd' || i FROM range(20) r(i)")
        for batch in range(3):
            ice.execute(
                f"INSERT OR REPLACE INTO {NS}.{table} SELECT i, 'b{batch}' FROM range({batch}, 30, 4) r(i)"
            )
        before = iceduck_rows(ice.con, f"SELECT * FROM {NS}.{table}")
        if engine == "spark":
            spark.sql(
                f"CALL iceduck.system.rewrite_data_files(table => '{NS}.{table}', "
                "options => map('rewrite-all', 'true'))"
            )
        else:
            ice.execute(
                f"CALL system.rewrite_data_files(table => '{NS}.{table}', "
                "options => map('rewrite-all', 'true'))"
            )
        assert iceduck_rows(ice.con, f"SELECT * FROM {NS}.{table}") == before
        _same_everywhere(spark, ice, table)
        if engine == "iceduck":  # iceduck drops the dangling ones too
            assert ice.fetch(f"SELECT count(*) FROM {NS}.{table}.delete_files") == [(0,)]


def test_upserts_into_a_table_spark_made(spark: Any, ice: Iceduck) -> None:
    spark.sql(
        f"CREATE TABLE iceduck.{NS}.from_spark (id BIGINT NOT NULL, data STRING) USING iceberg "
        "PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('format-version'='2')"
    )
    spark.sql(f"ALTER TABLE iceduck.{NS}.from_spark SET IDENTIFIER FIELDS id")
    spark.sql(f"INSERT INTO iceduck.{NS}.from_spark SELECT id, concat('s', id) FROM range(40)")
    ice.execute(f"INSERT OR REPLACE INTO {NS}.from_spark VALUES (1, 'ice'), (39, 'ice'), (100, 'ice')")
    _same_everywhere(spark, ice, "from_spark")


def _changes(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in rows), key=repr)


@pytest.fixture(scope="module")
def history(spark: Any, ice: Iceduck) -> str:
    """A copy-on-write history (Spark's changelog refuses delete files) written by both
    engines, with a compaction in the middle."""
    table = "history"
    ice.execute(
        f"CREATE TABLE {NS}.{table} (id BIGINT NOT NULL, data STRING, cat STRING) PARTITIONED BY (cat)"
    )
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    spark.sql(f"INSERT INTO iceduck.{NS}.{table} VALUES (4, 'd', 'y')")
    ice.execute(f"UPDATE {NS}.{table} SET data = 'B' WHERE id = 2")
    spark.sql(f"DELETE FROM iceduck.{NS}.{table} WHERE id = 3")
    ice.execute(
        f"MERGE INTO {NS}.{table} t USING (SELECT 1 AS id, 'A' AS data, 'x' AS cat UNION ALL "
        "SELECT 5, 'e', 'y') s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    spark.sql(
        f"CALL iceduck.system.rewrite_data_files(table => '{NS}.{table}', "
        "options => map('rewrite-all','true'))"
    )
    spark.sql(f"UPDATE iceduck.{NS}.{table} SET data = 'again' WHERE id = 4")
    return table


@pytest.mark.parametrize(
    "arguments",
    ["", ", identifier_columns => array('id')", ", net_changes => true"],
    ids=["carry-overs", "updates", "net"],
)
def test_changelog_equals_sparks(spark: Any, ice: Iceduck, history: str, arguments: str) -> None:
    """Spark's create_changelog_view and iceduck's give the same rows."""
    call = (
        f"CALL {{}}system.create_changelog_view(table => '{NS}.{history}', changelog_view => 'cv'{arguments})"
    )
    spark.sql(call.format("iceduck."))
    ice.execute(call.format(""))
    columns = "id, data, cat, _change_type, _change_ordinal, _commit_snapshot_id"
    expected = _changes(spark.sql(f"SELECT {columns} FROM cv").collect())
    got = _changes(ice.fetch(f"SELECT {columns} FROM cv"))
    assert got == expected
    assert got  # a history with changes
