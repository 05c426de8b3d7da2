"""Paimon tables written by Paimon's own Java writer (``paimon-spark-3.5`` from Maven, in a
Spark of its own), read by iceduck as that Spark reads them.

The writer compacts (files above level 0), keeps deletion vectors on a primary-key table,
and merges by each engine iceduck reads: ``deduplicate``, ``partial-update``,
``aggregation`` and ``first-row``; tables are partitioned or not, with fixed and dynamic
buckets, in Parquet, ORC and Avro, with a tag and an added column. For every table iceduck
reads the current rows, every snapshot and the tag equal to Spark's reads (full result sets).

The Spark connector is Paimon 0.9.0: the machine's Maven Central serves no ``paimon-spark-3.5``
of a 1.x release (they answer 404), so this is also the "older Paimon release" of the
Java-ecosystem issue; pypaimon 2.1 writes the 1.x tables of the other Paimon tests.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import iceduck
from tests.support import maven
from tests.support.scenario_rows import assert_same, iceduck_rows
from tests.support.spark_peer import SparkPeer

pytestmark = [pytest.mark.spark, pytest.mark.old_runtimes]

PAIMON_SPARK = maven.PAIMON_SPARK
DB = "shop"


#: table -> (Spark DDL after the name, the statements that write it after CREATE)
TABLES: dict[str, tuple[str, list[str]]] = {
    "appends": (
        "(id BIGINT, v STRING, day STRING) PARTITIONED BY (day) TBLPROPERTIES ('file.format' = 'orc')",
        [
            "INSERT INTO {t} SELECT id, concat('v', id), concat('2024-01-0', CAST(id % 3 + 1 AS string)) "
            "FROM range(30)",
            "INSERT INTO {t} SELECT id, 'again', '2024-01-01' FROM range(5)",
            "CALL sys.compact(table => '{name}')",
            "ALTER TABLE {t} ADD COLUMN extra INT",
            "INSERT INTO {t} VALUES (100, 'x', '2024-01-02', 7)",
        ],
    ),
    "dedup": (
        "(id BIGINT, v STRING, n INT) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')",
        [
            "INSERT INTO {t} SELECT id, concat('v', id), CAST(id AS INT) FROM range(40)",
            "INSERT INTO {t} SELECT id, 'upd', -1 FROM range(0, 40, 3)",
            "CALL sys.compact(table => '{name}')",
            "CALL sys.create_tag(table => '{name}', tag => 'after_compact')",
            "INSERT INTO {t} SELECT id, 'late', 99 FROM range(35, 45)",
            "DELETE FROM {t} WHERE id = 5",
        ],
    ),
    "dv": (
        "(id BIGINT, v STRING, day STRING) PARTITIONED BY (day) TBLPROPERTIES ('primary-key' = 'day,id', "
        "'bucket' = '1', 'deletion-vectors.enabled' = 'true', 'file.format' = 'avro')",
        [
            "INSERT INTO {t} SELECT id, concat('v', id), '2024-02-01' FROM range(20)",
            "INSERT INTO {t} SELECT id, 'second', '2024-02-01' FROM range(0, 20, 4)",
            "CALL sys.compact(table => '{name}')",
            "INSERT INTO {t} SELECT id, 'third', '2024-02-01' FROM range(1, 20, 5)",
            "DELETE FROM {t} WHERE id = 2",
        ],
    ),
    "partial": (
        "(id BIGINT, a STRING, b STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
        "'merge-engine' = 'partial-update')",
        [
            "INSERT INTO {t} VALUES (1, 'a1', NULL), (2, NULL, 'b2')",
            "INSERT INTO {t} VALUES (1, NULL, 'b1'), (2, 'a2', NULL), (3, 'a3', 'b3')",
            "CALL sys.compact(table => '{name}')",
            "INSERT INTO {t} VALUES (3, NULL, 'b3new')",
        ],
    ),
    "agg": (
        "(id BIGINT, total BIGINT, biggest INT, last_v STRING) TBLPROPERTIES ('primary-key' = 'id', "
        "'bucket' = '1', 'merge-engine' = 'aggregation', 'fields.total.aggregate-function' = 'sum', "
        "'fields.biggest.aggregate-function' = 'max', 'fields.last_v.aggregate-function' = 'last_value')",
        [
            "INSERT INTO {t} VALUES (1, 10, 1, 'x'), (2, 5, 7, 'y')",
            "INSERT INTO {t} VALUES (1, 3, 9, 'z'), (3, 1, 1, 'w')",
            "CALL sys.compact(table => '{name}')",
            "INSERT INTO {t} VALUES (2, 100, 2, 'q')",
        ],
    ),
    "first": (
        "(id BIGINT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
        "'merge-engine' = 'first-row', 'changelog-producer' = 'lookup')",
        [
            "INSERT INTO {t} VALUES (1, 'first'), (2, 'first')",
            "INSERT INTO {t} VALUES (1, 'second'), (3, 'first')",
            "CALL sys.compact(table => '{name}')",
        ],
    ),
    "dynamic": (
        "(id BIGINT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '-1')",
        [
            "INSERT INTO {t} SELECT id, concat('v', id) FROM range(25)",
            "INSERT INTO {t} SELECT id, 'upd' FROM range(10, 30)",
        ],
    ),
}


@dataclass
class Written:
    peer: SparkPeer
    warehouse: Path

    def connect(self) -> iceduck.Connection:
        return iceduck.connect(self.warehouse.parent / "iceberg", paimon={"lake": str(self.warehouse)})


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Written]:
    try:
        jar = maven.jar(PAIMON_SPARK)
    except maven.MavenUnavailable as e:
        if os.environ.get("ICEDUCK_REQUIRE_MAVEN"):
            raise
        pytest.skip(f"Paimon's Spark connector: {e}")
    root = tmp_path_factory.mktemp("paimon-spark")
    warehouse = root / "paimon"
    catalogs = {
        "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
        "spark.sql.catalog.paimon": "org.apache.paimon.spark.SparkCatalog",
        "spark.sql.catalog.paimon.warehouse": f"file:{warehouse}",
        "spark.sql.defaultCatalog": "paimon",
    }
    peer = SparkPeer([jar], catalogs, root / "scratch")
    try:
        peer.sql(f"CREATE DATABASE {DB}")
        peer.sql(f"USE {DB}")
        for name, (ddl, statements) in TABLES.items():
            peer.sql(f"CREATE TABLE {DB}.{name} {ddl}")
            for statement in statements:
                peer.sql(statement.format(t=f"{DB}.{name}", name=f"{DB}.{name}"))
        yield Written(peer, warehouse)
    finally:
        peer.close()
        shutil.rmtree(root, ignore_errors=True)


def _same(written: Written, what: str, mine: str, theirs: str) -> None:
    with written.connect() as con:
        got = iceduck_rows(con, mine)
    assert_same(f"Paimon 0.9 {what}", got, written.peer.rows(theirs))


@pytest.mark.parametrize("table", sorted(TABLES))
def test_current_rows_read_as_paimons_spark_reads_them(written: Written, table: str) -> None:
    _same(written, table, f"SELECT * FROM lake.{DB}.{table}", f"SELECT * FROM {DB}.{table}")


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_snapshot_reads_as_paimons_spark_reads_it(written: Written, table: str) -> None:
    snapshots = [int(r[0]) for r in written.peer.collect(f"SELECT snapshot_id FROM {DB}.`{table}$snapshots`")]
    assert snapshots
    for snapshot in snapshots:
        _same(
            written,
            f"{table} snapshot {snapshot}",
            f"SELECT * FROM lake.{DB}.{table} VERSION AS OF {snapshot}",
            f"SELECT * FROM {DB}.{table} VERSION AS OF {snapshot}",
        )


def test_files_above_level_0_and_the_tag(written: Written) -> None:
    """The compactions really wrote files above level 0 (what pypaimon never writes), and
    the tag reads as Spark reads it."""
    levels = written.peer.collect(f"SELECT max(level) FROM {DB}.`dedup$files`")
    assert levels[0][0] > 0
    with written.connect() as con:
        assert con.execute(f"SELECT max(level) FROM lake.{DB}.dedup.files").fetchall() == [(levels[0][0],)]
    _same(
        written,
        "tag after_compact",
        f"SELECT * FROM lake.{DB}.dedup VERSION AS OF 'after_compact'",
        f"SELECT * FROM {DB}.dedup VERSION AS OF 'after_compact'",
    )
