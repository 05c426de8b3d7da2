"""Spark's Iceberg HiveCatalog and iceduck share one Hive standalone metastore.

Spark 3.5 + Iceberg 1.10.2 opens the run's metastore as catalog ``hms`` (``type=hive``,
``uri=thrift://127.0.0.1:<port>``, ``warehouse``: the settings ``iceduck.spark_conf`` gives
for a ``thrift://`` lake), added to the run's one SparkSession with ``spark.conf.set`` before
its first use; Spark's Hive client is the Hive 2.3.9 one PySpark ships. iceduck opens the
same metastore as :class:`~iceduck.catalog.hive.HiveCatalog`, and through
``iceduck.connect(warehouse, catalog_uri="thrift://...")``. Checked: a table Spark creates
and writes reads the same in iceduck, and the other way round; commits alternate on one
table; the metastore table iceduck writes is the one Spark writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import iceduck
from iceduck.catalog.hive import HiveCatalog
from iceduck.session.session import Session
from tests.support.hive_metastore import HiveMetastore, empty_metastore, metastore_table
from tests.support.writer_race import SPARK_IDS, race

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CATALOG = "hms"


@pytest.fixture(scope="module")
def shared(
    spark: SparkSession, hive_metastore: HiveMetastore, tmp_path_factory: Any
) -> Iterator[tuple[SparkSession, Session, Path]]:
    """Spark's catalog ``hms`` and an iceduck session on the same metastore and warehouse."""
    empty_metastore(hive_metastore)
    warehouse = tmp_path_factory.mktemp("hms-warehouse")
    for key, value in iceduck.spark_conf(warehouse, CATALOG, catalog_uri=hive_metastore.uri).items():
        if key.startswith("spark.sql.catalog."):  # the extensions are the session's already (static)
            spark.conf.set(key, value)
    catalog = HiveCatalog(hive_metastore.uri, str(warehouse), CATALOG)
    session = Session(warehouse, catalog_impl=catalog)
    yield spark, session, warehouse
    session.close()


def _both(spark: SparkSession, session: Session, table: str) -> list[tuple[Any, ...]]:
    """The table's rows read by Spark and by iceduck, which must be equal."""
    by_spark = [tuple(r) for r in spark.sql(f"SELECT * FROM {CATALOG}.{table} ORDER BY id").collect()]
    by_iceduck = session.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
    assert by_iceduck == by_spark
    return by_iceduck


def test_a_table_spark_creates_and_writes_reads_the_same(
    shared: tuple[SparkSession, Session, Path], hive_metastore: HiveMetastore
) -> None:
    spark, session, _ = shared
    spark.sql(f"CREATE NAMESPACE {CATALOG}.shop COMMENT 'the shop' WITH DBPROPERTIES ('team' = 'etl')")
    spark.sql(
        f"CREATE TABLE {CATALOG}.shop.orders (id bigint, who string, amount decimal(10,2)) USING iceberg "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    spark.sql(f"INSERT INTO {CATALOG}.shop.orders SELECT id, concat('c', id % 3), id * 1.5 FROM range(10)")
    spark.sql(f"DELETE FROM {CATALOG}.shop.orders WHERE id = 4")
    assert [r[0] for r in _both(spark, session, "shop.orders")] == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    properties = session.catalog.load_namespace_properties(("shop",))
    assert properties["comment"] == "the shop" and properties["team"] == "etl"
    stored = metastore_table(hive_metastore.uri, "shop", "orders")
    assert stored.parameters["table_type"] == "ICEBERG" and stored.tableType == "EXTERNAL_TABLE"


def test_a_table_iceduck_creates_and_writes_reads_the_same(
    shared: tuple[SparkSession, Session, Path], hive_metastore: HiveMetastore
) -> None:
    spark, session, _ = shared
    session.execute("CREATE NAMESPACE made")
    session.execute("CREATE TABLE made.t (id bigint, note string) TBLPROPERTIES ('format-version' = '2')")
    session.execute("INSERT INTO made.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    session.execute("DELETE FROM made.t WHERE id = 2")
    assert _both(spark, session, "made.t") == [(1, "a"), (3, "c")]
    # what iceduck stored is what Spark's HiveCatalog stores for its own tables
    spark.sql(f"CREATE TABLE {CATALOG}.made.by_spark (id bigint, note string) USING iceberg")
    ours = metastore_table(hive_metastore.uri, "made", "t")
    theirs = metastore_table(hive_metastore.uri, "made", "by_spark")
    assert (
        ours.tableType,
        ours.sd.inputFormat,
        ours.sd.outputFormat,
        ours.sd.serdeInfo.serializationLib,
    ) == (
        theirs.tableType,
        theirs.sd.inputFormat,
        theirs.sd.outputFormat,
        theirs.sd.serdeInfo.serializationLib,
    )
    assert [(c.name, c.type) for c in ours.sd.cols] == [(c.name, c.type) for c in theirs.sd.cols]
    shared_keys = {"EXTERNAL", "table_type", "uuid", "metadata_location"}
    assert shared_keys <= set(ours.parameters) and shared_keys <= set(theirs.parameters)


def test_commits_alternate_on_one_table(shared: tuple[SparkSession, Session, Path]) -> None:
    spark, session, _ = shared
    session.execute("CREATE NAMESPACE IF NOT EXISTS alt")
    spark.sql(
        f"CREATE TABLE {CATALOG}.alt.t (id bigint, who string) USING iceberg "
        "TBLPROPERTIES ('format-version' = '2')"
    )
    for i in range(3):
        spark.sql(f"INSERT INTO {CATALOG}.alt.t VALUES ({2 * i}, 'spark')")
        session.execute(f"INSERT INTO alt.t VALUES ({2 * i + 1}, 'iceduck')")
    spark.sql(f"UPDATE {CATALOG}.alt.t SET who = 'both' WHERE id = 1")
    session.execute("DELETE FROM alt.t WHERE id = 0")
    rows = _both(spark, session, "alt.t")
    assert rows == [(1, "both"), (2, "spark"), (3, "iceduck"), (4, "spark"), (5, "iceduck")]
    assert session.execute("SELECT count(*) FROM alt.t.snapshots").fetchall() == [
        (8,)
    ]  # six inserts, an update, a delete


def test_concurrent_commits_from_spark_and_iceduck_are_all_kept(
    shared: tuple[SparkSession, Session, Path],
) -> None:
    """Spark and iceduck append to one table at the same moment: both take the metastore's
    table lock, and a loser re-reads and retries, so every committed batch is in the table."""
    spark, session, _ = shared
    session.execute("CREATE NAMESPACE IF NOT EXISTS race")
    session.execute(
        "CREATE TABLE race.t (id bigint, who string) TBLPROPERTIES ('format-version' = '2', "
        "'commit.retry.num-retries' = '50', 'commit.retry.min-wait-ms' = '10', "
        "'commit.retry.max-wait-ms' = '500')"
    )
    spark_batches = 5
    done = race(
        lambda i: spark.sql(f"INSERT INTO {CATALOG}.race.t VALUES ({i}, 'spark')"),
        lambda i: session.execute(f"INSERT INTO race.t VALUES ({i}, 'iceduck')"),
        spark_batches,
        10,
    )
    expected = [(b, "iceduck") for b in range(done)]
    expected += [(SPARK_IDS + b, "spark") for b in range(spark_batches)]
    assert _both(spark, session, "race.t") == expected
    snapshots = session.execute("SELECT count(*) FROM race.t.snapshots").fetchall()
    assert snapshots == [(spark_batches + done,)]


def test_iceduck_connect_with_a_thrift_catalog_uri(
    shared: tuple[SparkSession, Session, Path], hive_metastore: HiveMetastore
) -> None:
    """``iceduck.connect(warehouse, catalog_uri="thrift://...")``: SQL end to end on the metastore."""
    spark, _, warehouse = shared
    with iceduck.connect(warehouse, catalog_uri=hive_metastore.uri, catalog=CATALOG) as con:
        con.execute("CREATE NAMESPACE IF NOT EXISTS sql_e2e")
        con.execute("CREATE TABLE sql_e2e.t AS SELECT range AS id, 'x' || range AS s FROM range(5)")
        con.execute("UPDATE sql_e2e.t SET s = 'changed' WHERE id = 2")
        assert con.execute("SELECT count(*) FROM sql_e2e.t WHERE s = 'changed'").fetchall() == [(1,)]
    by_spark = [tuple(r) for r in spark.sql(f"SELECT * FROM {CATALOG}.sql_e2e.t ORDER BY id").collect()]
    assert by_spark == [(0, "x0"), (1, "x1"), (2, "changed"), (3, "x3"), (4, "x4")]
