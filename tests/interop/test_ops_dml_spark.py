"""iceduck's INSERT/DELETE/UPDATE/MERGE read back by Spark 3.5 + Iceberg 1.10, and Spark and
iceduck writing the same tables in turn.

Tables live in namespace ``ops_dml`` of the fixture warehouse (dropped first), which Spark
sees through its ``iceduck`` JDBC catalog. After every step both engines must return the
same rows; Spark must see iceduck's deletion vectors / position deletes in
``.delete_files`` and, in v3, the same ``_row_id`` for every row.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from iceduck.errors import UserError, ValidationError
from tests.ops.harness import Iceduck
from tests.support.namespaces import drop_namespace_with_tables
from tests.support.scenario_rows import assert_same, iceduck_rows, spark_rows

NS = "ops_dml"


@pytest.fixture(scope="module")
def ice(spark: Any, spark_warehouse: Any) -> Iterator[Iceduck]:
    engine = Iceduck(spark_warehouse.path)
    catalog = engine.con.session.catalog
    drop_namespace_with_tables(catalog, NS)
    engine.execute(f"CREATE NAMESPACE {NS}")
    yield engine
    engine.close()


def same_rows(spark: Any, ice: Iceduck, table: str) -> None:
    query = f"SELECT * FROM {NS}.{table}"
    assert_same(query, iceduck_rows(ice.con, query), spark_rows(spark, f"SELECT * FROM iceduck.{NS}.{table}"))


def create(ice: Iceduck, table: str, version: int, mode: str, partitioned: bool) -> None:
    partition = " PARTITIONED BY (bucket(4, id))" if partitioned else ""
    ice.execute(
        f"CREATE TABLE {NS}.{table} (id BIGINT, data STRING, cat STRING) USING iceberg{partition} "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='{mode}', "
        f"'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
    )
    ice.execute(
        f"INSERT INTO {NS}.{table} SELECT i, 'd' || i, CASE WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END "
        "FROM range(0, 30) AS r(i)"
    )
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (100, 'x', 'odd'), (101, NULL, NULL)")


def spark_row_ids(spark: Any, table: str) -> dict[int, int]:
    return {r[0]: r[1] for r in spark.sql(f"SELECT id, _row_id FROM iceduck.{NS}.{table}").collect()}


@pytest.mark.parametrize(
    ("version", "mode", "partitioned"),
    [
        (2, "merge-on-read", True),
        (3, "merge-on-read", False),
        (2, "copy-on-write", False),
        (3, "copy-on-write", True),
    ],
)
def test_spark_reads_iceduck_dml(
    spark: Any, ice: Iceduck, version: int, mode: str, partitioned: bool
) -> None:
    table = f"t_v{version}_{mode.replace('-', '_')}_{int(partitioned)}"
    create(ice, table, version, mode, partitioned)
    ice.execute(f"DELETE FROM {NS}.{table} WHERE id % 5 = 0")
    ice.execute(f"UPDATE {NS}.{table} SET data = upper(data), cat = 'upd' WHERE id % 7 = 1")
    ice.execute(
        f"MERGE INTO {NS}.{table} t USING (SELECT 3 AS id, 'm' AS data, 'm' AS cat UNION ALL "
        "SELECT 500, 'n', 'n') s ON t.id = s.id WHEN MATCHED THEN UPDATE SET data = s.data "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    same_rows(spark, ice, table)
    deletes = spark.sql(
        f"SELECT file_format, referenced_data_file FROM iceduck.{NS}.{table}.delete_files"
    ).collect()
    if mode == "copy-on-write":
        assert deletes == []
    else:
        assert deletes and {r[0] for r in deletes} == {"PUFFIN" if version == 3 else "PARQUET"}
        if version == 3:  # one DV per data file
            refs = [r[1] for r in deletes]
            assert len(refs) == len(set(refs))
    if version == 3:
        expected = {i: r for i, (r, _) in ice.lineage(f"{NS}.{table}").items()}
        assert spark_row_ids(spark, table) == expected
        assert len(set(expected.values())) == len(expected)


@pytest.mark.parametrize("version", [2, 3])
def test_spark_and_iceduck_write_in_turn(spark: Any, ice: Iceduck, version: int) -> None:
    table = f"turns_v{version}"
    create(ice, table, version, "merge-on-read", True)
    ice.execute(f"DELETE FROM {NS}.{table} WHERE id < 4")
    spark.sql(f"DELETE FROM iceduck.{NS}.{table} WHERE id BETWEEN 4 AND 6")  # Spark merges iceduck's deletes
    same_rows(spark, ice, table)
    ice.execute(f"DELETE FROM {NS}.{table} WHERE id IN (7, 8, 100)")  # iceduck merges Spark's
    same_rows(spark, ice, table)
    spark.sql(f"UPDATE iceduck.{NS}.{table} SET data = 'spark' WHERE id % 3 = 0")
    ice.execute(f"UPDATE {NS}.{table} SET data = 'iceduck' WHERE id % 4 = 1")
    spark.sql(f"INSERT INTO iceduck.{NS}.{table} VALUES (900, 'spark-insert', 'odd')")
    ice.execute(
        f"MERGE INTO {NS}.{table} t USING (SELECT 900 AS id UNION ALL SELECT 901) s ON t.id = s.id "
        "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, data) VALUES (s.id, 'merged')"
    )
    same_rows(spark, ice, table)
    if version == 3:
        refs = [
            r[0]
            for r in spark.sql(
                f"SELECT referenced_data_file FROM iceduck.{NS}.{table}.delete_files"
            ).collect()
        ]
        assert len(refs) == len(set(refs))
        expected = {i: r for i, (r, _) in ice.lineage(f"{NS}.{table}").items()}
        assert spark_row_ids(spark, table) == expected


def test_iceduck_writes_spark_table(spark: Any, ice: Iceduck) -> None:
    """The reverse: Spark creates and writes (with its own DVs), iceduck deletes, updates and
    overwrites, Spark reads and writes again."""
    t = "iceberg_first"
    spark.sql(
        f"CREATE TABLE iceduck.{NS}.{t} (id bigint, data string, day date) USING iceberg "
        "PARTITIONED BY (days(day)) TBLPROPERTIES ('format-version'='3', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
    )
    spark.sql(
        f"INSERT INTO iceduck.{NS}.{t} SELECT id, concat('s', id), "
        "date_add(DATE'2024-01-01', CAST(id % 3 AS INT)) FROM range(0, 40)"
    )
    spark.sql(f"DELETE FROM iceduck.{NS}.{t} WHERE id % 10 = 0")
    ice.execute(f"DELETE FROM {NS}.{t} WHERE id % 10 = 1")
    same_rows(spark, ice, t)
    ice.execute(f"UPDATE {NS}.{t} SET data = 'changed' WHERE id < 8")
    ice.execute(f"INSERT OVERWRITE {NS}.{t} SELECT 1000, 'over', DATE '2024-01-02'")
    same_rows(spark, ice, t)
    spark.sql(f"UPDATE iceduck.{NS}.{t} SET data = 'spark' WHERE id = 1000")
    same_rows(spark, ice, t)
    days = spark.sql(f"SELECT DISTINCT day FROM iceduck.{NS}.{t} WHERE data = 'changed'").collect()
    assert days, "the overwrite replaced only the partition of 2024-01-02"


def test_v1_merge_on_read_refused_like_spark(spark: Any, ice: Iceduck) -> None:
    """v1 has no delete files: Spark refuses a merge-on-read UPDATE ("Deletes are supported
    in V2 and above") and so does iceduck; deletes of whole files need none and work."""
    ice.execute(
        f"CREATE TABLE {NS}.v1 (id BIGINT) USING iceberg TBLPROPERTIES ('format-version'='1', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
    )
    ice.execute(f"INSERT INTO {NS}.v1 VALUES (1), (2), (3)")
    with pytest.raises(Exception, match="V2 and above"):
        spark.sql(f"UPDATE iceduck.{NS}.v1 SET id = 5 WHERE id = 2")
    with pytest.raises(ValidationError, match="format-version 1"):
        ice.execute(f"UPDATE {NS}.v1 SET id = 5 WHERE id = 2")
    ice.execute(f"DELETE FROM {NS}.v1 WHERE id >= 1")
    same_rows(spark, ice, "v1")


def _twins(spark: Any, ice: Iceduck, name: str) -> tuple[str, str]:
    """Two equal tables, ``<name>_ice`` and ``<name>_spark``: iceduck writes one, Spark the other."""
    for twin in (f"{name}_ice", f"{name}_spark"):
        create(ice, twin, 2, "merge-on-read", False)
    return f"{name}_ice", f"{name}_spark"


@contextmanager
def current_catalog(spark: Any, catalog: str) -> Iterator[None]:
    """Spark's current catalog is ``catalog`` inside the block (as after ``USE catalog``)."""
    before = spark.catalog.currentCatalog()
    spark.catalog.setCurrentCatalog(catalog)
    try:
        yield
    finally:
        spark.catalog.setCurrentCatalog(before)


#: statements naming the target's columns by its full name: ``{t}`` is the table's namespace
#: and name, ``{ct}`` the same with the catalog
QUALIFIED = [
    "MERGE INTO {t} USING (SELECT 3 AS id, 'm' AS data UNION ALL SELECT 900, 'n') s "
    "ON {t}.id = s.id WHEN MATCHED AND {t}.id > 100 THEN DELETE "
    "WHEN MATCHED THEN UPDATE SET data = concat(s.data, {ct}.data) "
    "WHEN NOT MATCHED THEN INSERT (id, data) VALUES (s.id, s.data)",
    "MERGE INTO {ct} USING (SELECT 4 AS id) s ON {ct}.id = s.id "
    "WHEN MATCHED THEN UPDATE SET {t}.data = 'key' "
    "WHEN NOT MATCHED BY SOURCE AND {t}.id > 25 THEN DELETE",
    "UPDATE {t} SET data = upper({t}.data), {ct}.cat = 'upd' WHERE {t}.id % 7 = 1",
    "DELETE FROM {ct} WHERE {ct}.id % 5 = 0 AND {t}.cat = 'even'",
]


@pytest.mark.parametrize("sql", QUALIFIED)
def test_qualified_column_names_as_spark(spark: Any, ice: Iceduck, sql: str) -> None:
    """Spark resolves ``ns.t.col`` and ``catalog.ns.t.col`` against a target without an
    alias, in ON, WHEN conditions, SET keys and values; iceduck must accept the same
    statements and change the rows the same way."""
    mine, theirs = _twins(spark, ice, f"q{QUALIFIED.index(sql)}")
    ice.execute(sql.format(t=f"{NS}.{mine}", ct=f"iceduck.{NS}.{mine}"))
    with current_catalog(spark, "iceduck"):  # so that Spark reads ns.t as iceduck's too
        spark.sql(sql.format(t=f"{NS}.{theirs}", ct=f"iceduck.{NS}.{theirs}"))
    query = f"SELECT * FROM iceduck.{NS}.{{}}"
    assert_same(sql, spark_rows(spark, query.format(mine)), spark_rows(spark, query.format(theirs)))


#: statements Spark refuses, and iceduck with them: (SQL, what Spark's error says)
REFUSED = [
    (
        "MERGE INTO {ct} t USING (SELECT 1 AS id) s ON t.id = s.id "
        "WHEN MATCHED THEN DELETE WHEN MATCHED AND s.id > 1 THEN UPDATE SET data = 'x'",
        "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION",
    ),
    (
        "MERGE INTO {ct} t USING (SELECT 1 AS id) s ON t.id = s.id "
        "WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id) "
        "WHEN NOT MATCHED BY TARGET AND s.id > 1 THEN INSERT (id) VALUES (0)",
        "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION",
    ),
    (
        "MERGE INTO {ct} t USING (SELECT 1 AS id) s ON t.id = s.id "
        "WHEN NOT MATCHED BY SOURCE THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE AND t.id > 1 THEN UPDATE SET data = 'x'",
        "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION",
    ),
    # an alias hides the table's name
    (
        "MERGE INTO {ct} AS x USING (SELECT 1 AS id) s ON {t}.id = s.id WHEN MATCHED THEN DELETE",
        "UNRESOLVED_COLUMN",
    ),
    ("DELETE FROM {ct} AS x WHERE {t}.id = 1", "UNRESOLVED_COLUMN"),
]


@pytest.mark.parametrize(("sql", "spark_says"), REFUSED)
def test_statements_spark_refuses_are_refused(spark: Any, ice: Iceduck, sql: str, spark_says: str) -> None:
    mine, theirs = _twins(spark, ice, f"r{[r[0] for r in REFUSED].index(sql)}")
    with pytest.raises(Exception, match=spark_says):
        spark.sql(sql.format(t=f"{NS}.{theirs}", ct=f"iceduck.{NS}.{theirs}"))
    with pytest.raises(UserError):
        ice.execute(sql.format(t=f"{NS}.{mine}", ct=f"iceduck.{NS}.{mine}"))
    same_rows(spark, ice, mine)
