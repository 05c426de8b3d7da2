"""Values Spark writes, iceduck writes too: long identity-partition strings and 38-digit
decimal partitions written by Spark 3.5 + Iceberg 1.10, re-inserted, updated and deleted by
iceduck, and read back by Spark, with both engines' files of a value in one folder.

Spark cannot write a value whose folder name ``k=<escaped value>`` exceeds 255 bytes to a
local table ("Mkdirs failed to create file"); iceduck writes it under a shortened name
(:func:`iceduck.engine.write.bounded_folder_name`) that Spark then reads. Truncating
decimal(38, 0)'s smallest value to a multiple of 10 needs a 39th digit: both engines refuse.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.errors import ValidationError
from tests.engine.test_partition_values import NINES, assert_java_folder, folder_of
from tests.support.namespaces import drop_namespace_with_tables
from tests.support.scenario_rows import assert_same, iceduck_rows, spark_rows

NS = "partition_values"
#: what Spark writes: 150, 200, 250 and 253 bytes (the longest that fits a folder name), and
#: multi-byte values whose escaped names come close to 255 bytes
SPARK_STRINGS = ["b" * 150, "c" * 200, "d" * 250, "e" * 253, "é" * 42, "😀" * 20, "a/b c=%", ""]
#: what only iceduck can write to a local table: escaped names over 255 bytes
ICEDUCK_STRINGS = ["f" * 254, "g" * 1000, "é" * 500, "😀/" * 300]
SPARK_DECIMALS = [NINES, "-" + NINES, "9" * 31, "1" + "0" * 37, "0", "-1"]


@pytest.fixture(scope="module")
def ice(spark: Any, spark_warehouse_path: Path) -> Iterator[iceduck.Connection]:
    con = iceduck.connect(spark_warehouse_path)
    catalog = con.session.catalog
    drop_namespace_with_tables(catalog, NS)
    con.cursor().execute(f"CREATE NAMESPACE {NS}")
    yield con
    con.close()


def same_rows(spark: Any, ice: iceduck.Connection, table: str) -> None:
    query = f"SELECT * FROM {NS}.{table}"
    assert_same(query, iceduck_rows(ice, query), spark_rows(spark, f"SELECT * FROM iceduck.{NS}.{table}"))


def spark_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def folders_by_value(ice: iceduck.Connection, table: str) -> dict[Any, set[str]]:
    """Partition value -> the folders of its live data files (written by either engine)."""
    rows = ice.cursor().execute(f"SELECT partition.k, file_path FROM {NS}.{table}.data_files").fetchall()
    out: dict[Any, set[str]] = {}
    for value, path in rows:
        out.setdefault(value, set()).add(folder_of(path))
    return out


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_long_string_partitions_spark_wrote(spark: Any, ice: iceduck.Connection, mode: str) -> None:
    table = f"s_{mode.replace('-', '_')}"
    spark.sql(
        f"CREATE TABLE iceduck.{NS}.{table} (id BIGINT, k STRING, v INT) USING iceberg PARTITIONED BY (k) "
        f"TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}')"
    )
    values = ", ".join(f"({i}, {spark_string(k)}, {i})" for i, k in enumerate(SPARK_STRINGS))
    spark.sql(f"INSERT INTO iceduck.{NS}.{table} VALUES {values}, (99, NULL, 99)")
    same_rows(spark, ice, table)
    spark_folders = folders_by_value(ice, table)

    cur = ice.cursor()
    cur.execute(f"INSERT INTO {NS}.{table} SELECT id + 100, k, v FROM {NS}.{table}")  # re-insert
    cur.executemany(
        f"INSERT INTO {NS}.{table} VALUES (?, ?, ?)", [(200 + i, k, i) for i, k in enumerate(ICEDUCK_STRINGS)]
    )
    cur.execute(f"UPDATE {NS}.{table} SET v = -v WHERE id % 2 = 0")
    cur.execute(f"DELETE FROM {NS}.{table} WHERE id % 3 = 0")
    cur.execute(f"UPDATE {NS}.{table} SET k = k || 'x' WHERE length(k) = 250")
    same_rows(spark, ice, table)

    # iceduck's files of a value Spark wrote sit in Spark's folder of it
    for value, found in folders_by_value(ice, table).items():
        if value in spark_folders:
            assert found <= spark_folders[value], value
        assert len(found) == 1, value
        assert_java_folder(next(iter(found)), "k", "null" if value is None else value)

    # and Spark writes to the table iceduck wrote, values it can write
    spark.sql(
        f"INSERT INTO iceduck.{NS}.{table} SELECT id + 1000, k, v FROM iceduck.{NS}.{table} WHERE id < 100"
    )
    same_rows(spark, ice, table)


def test_spark_cannot_create_folder_names_over_255_bytes(spark: Any, ice: iceduck.Connection) -> None:
    """Why iceduck shortens such names instead of copying Java: Java's name cannot exist."""
    spark.sql(f"CREATE TABLE iceduck.{NS}.too_long (k STRING) USING iceberg PARTITIONED BY (k)")
    with pytest.raises(Exception, match=r"Mkdirs failed to create"):
        spark.sql(f"INSERT INTO iceduck.{NS}.too_long VALUES (repeat('f', 254))")
    ice.cursor().execute(f"INSERT INTO {NS}.too_long VALUES (repeat('f', 254))")
    assert spark.sql(f"SELECT length(k) FROM iceduck.{NS}.too_long").collect()[0][0] == 254


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_decimal38_partitions_spark_wrote(spark: Any, ice: iceduck.Connection, mode: str) -> None:
    table = f"d_{mode.replace('-', '_')}"
    spark.sql(
        f"CREATE TABLE iceduck.{NS}.{table} (id INT, k DECIMAL(38,0), t DECIMAL(38,10), v INT) USING iceberg "
        "PARTITIONED BY (k, truncate(3, t), bucket(8, k)) "
        f"TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}')"
    )
    values = ", ".join(
        f"({i}, CAST('{k}' AS DECIMAL(38,0)), CAST('{k[:28]}.{i}' AS DECIMAL(38,10)), {i})"
        for i, k in enumerate(SPARK_DECIMALS)
    )
    spark.sql(f"INSERT INTO iceduck.{NS}.{table} VALUES {values}")
    same_rows(spark, ice, table)
    spark_folders = folders_by_value(ice, table)

    cur = ice.cursor()
    cur.execute(f"UPDATE {NS}.{table} SET v = v + 1 WHERE k = {NINES}")  # failed: decimal.InvalidOperation
    cur.execute(f"INSERT INTO {NS}.{table} SELECT id + 100, k, t, v FROM {NS}.{table}")
    cur.execute(f"DELETE FROM {NS}.{table} WHERE k = -{NINES} AND id < 100")
    cur.execute(f"UPDATE {NS}.{table} SET t = -t WHERE id % 2 = 1")
    same_rows(spark, ice, table)
    assert ice.cursor().execute(f"SELECT v FROM {NS}.{table} WHERE id = 0").fetchall() == [(1,)]
    for value, found in folders_by_value(ice, table).items():
        k_folders = {f.split("/", 1)[0] for f in found}
        assert k_folders == {f.split("/", 1)[0] for f in spark_folders[value]}, value
        assert_java_folder(next(iter(k_folders)), "k", str(value))


def test_decimal_truncate_past_38_digits_is_refused_by_both(spark: Any, ice: iceduck.Connection) -> None:
    spark.sql(
        f"CREATE TABLE iceduck.{NS}.trunc (d DECIMAL(38,0)) USING iceberg PARTITIONED BY (truncate(10, d))"
    )
    with pytest.raises(Exception, match=r"Cannot write value as decimal\(38,0\), too large"):
        spark.sql(f"INSERT INTO iceduck.{NS}.trunc VALUES (-{NINES})")
    with pytest.raises(ValidationError, match=f"-{NINES} needs more digits than decimal"):
        ice.cursor().execute(f"INSERT INTO {NS}.trunc VALUES (-{NINES})")
    ice.cursor().execute(f"INSERT INTO {NS}.trunc VALUES ({NINES}), (-{'9' * 37})")
    got = sorted(r[0] for r in spark.sql(f"SELECT d FROM iceduck.{NS}.trunc").collect())
    assert got == [Decimal("-" + "9" * 37), Decimal(NINES)]
