"""``add_files`` next to Spark 3.5 + Iceberg 1.10's own.

Parquet files written by pyarrow without field ids (a flat folder, and Hive-style
partition folders) are imported by iceduck into one table and by Spark's
``CALL system.add_files`` into a twin: Spark reads iceduck's table with the files' rows
(through the name mapping iceduck set), iceduck reads Spark's twin with the same rows,
and both report the same number of added files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from iceduck.connection import Connection

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

NS = "procedures_add_files"


def write(path: Path, rows: dict[str, list[Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(rows), path)


def spark_rows(spark: SparkSession, table: str) -> list[tuple[Any, ...]]:
    spark.sql(f"REFRESH TABLE iceduck.{table}")
    return sorted(tuple(r) for r in spark.sql(f"SELECT * FROM iceduck.{table}").collect())


def iceduck_rows(con: Connection, table: str) -> list[tuple[Any, ...]]:
    return sorted(con.execute(f"SELECT * FROM {table}").fetchall())


def add_files(run: Any, table: str, source: Path, extra: str = "") -> tuple[Any, ...]:
    sql = f"CALL iceduck.system.add_files(table => '{table}', source_table => '`parquet`.`{source}`'{extra})"
    return tuple(run(sql))


@pytest.mark.parametrize("version", [2, 3])
def test_flat_files_both_ways(
    spark: SparkSession, con: Connection, tmp_path_factory: pytest.TempPathFactory, version: int
) -> None:
    src = tmp_path_factory.mktemp(f"flat{version}")
    write(src / "a.parquet", {"name": ["x", None, "z"], "id": [1, 2, 3]})
    write(src / "b.parquet", {"id": [4], "name": ["w"], "ignored": [1.5]})
    expected = [(1, "x"), (2, None), (3, "z"), (4, "w")]
    ours, twin = f"{NS}.flat_ours_v{version}", f"{NS}.flat_twin_v{version}"
    for name in (ours, twin):
        con.execute(
            f"CREATE TABLE {name} (id bigint, name string) TBLPROPERTIES ('format-version' = '{version}')"
        )
        con.execute(f"INSERT INTO {name} VALUES (0, 'seed')")
    got = add_files(lambda sql: con.execute(sql).fetchone(), ours, src)
    spark.sql(f"REFRESH TABLE iceduck.{twin}")
    theirs = add_files(lambda sql: spark.sql(sql).collect()[0], twin, src)
    assert got[0] == theirs[0] == 2
    assert spark_rows(spark, ours) == iceduck_rows(con, twin) == [(0, "seed"), *expected]
    assert iceduck_rows(con, ours) == spark_rows(spark, twin) == [(0, "seed"), *expected]
    # both engines keep writing the imported table: a delete and an insert
    spark.sql(f"DELETE FROM iceduck.{ours} WHERE id = 2")
    con.execute(f"INSERT INTO {ours} VALUES (5, 'v')")
    assert iceduck_rows(con, ours) == [(0, "seed"), (1, "x"), (3, "z"), (4, "w"), (5, "v")]


def test_hive_partitions_and_a_filter_both_ways(
    spark: SparkSession, con: Connection, tmp_path_factory: pytest.TempPathFactory
) -> None:
    src = tmp_path_factory.mktemp("hive")
    write(src / "cat=x" / "f1.parquet", {"id": [1, 2], "v": ["a", "b"]})
    write(src / "cat=y" / "f2.parquet", {"id": [3], "v": ["c"]})
    write(src / "cat=z" / "f3.parquet", {"id": [4], "v": ["d"]})
    ours, twin = f"{NS}.hive_ours", f"{NS}.hive_twin"
    for name in (ours, twin):
        con.execute(f"CREATE TABLE {name} (id bigint, v string, cat string) PARTITIONED BY (cat)")
    extra = ", partition_filter => map('cat', 'x')"
    got = add_files(lambda sql: con.execute(sql).fetchone(), ours, src, extra)
    spark.sql(f"REFRESH TABLE iceduck.{twin}")
    theirs = add_files(lambda sql: spark.sql(sql).collect()[0], twin, src, extra)
    assert got[0] == theirs[0] == 1
    assert spark_rows(spark, ours) == iceduck_rows(con, twin) == [(1, "a", "x"), (2, "b", "x")]
    got = add_files(lambda sql: con.execute(sql).fetchone(), ours, src, ", check_duplicate_files => false")
    theirs = add_files(lambda sql: spark.sql(sql).collect()[0], twin, src, ", check_duplicate_files => false")
    assert got[0] == theirs[0] == 3
    assert spark_rows(spark, ours) == iceduck_rows(con, twin)
    assert iceduck_rows(con, ours) == spark_rows(spark, twin)
    assert len(iceduck_rows(con, ours)) == 6
    partition = spark.sql(f"SELECT count(*) FROM iceduck.{ours} WHERE cat = 'y'").collect()[0][0]
    assert partition == 1
