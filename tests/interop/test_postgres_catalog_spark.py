"""Spark's JDBC catalog and iceduck share one PostgreSQL database.

Spark 3.5 + Iceberg 1.10.2 opens the module's database as catalog ``pg`` (``type=jdbc``,
``uri=jdbc:postgresql://...``, ``jdbc.user``/``jdbc.password``, ``jdbc.schema-version=V1``,
Debian's PostgreSQL JDBC driver on its class path) and iceduck opens it as
``PostgresCatalog(uri, warehouse, "pg")``: the same rows, since both store the catalog name.
The catalog is added to the run's one SparkSession with ``spark.conf.set`` before its first
use. Checked: the layout Spark creates is iceduck's; alternating writes to the same tables
read the same both ways after every step; commits from Spark and iceduck at the same time
are all in the table.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from iceduck.catalog.postgres import PostgresCatalog
from iceduck.session.session import Session
from tests.support.postgres import PostgresServer
from tests.support.writer_race import SPARK_IDS, race

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]'")

CATALOG = "pg"
JDBC_JAR = Path("/usr/share/java/postgresql.jar")


def _spark_catalog(spark: SparkSession, name: str, server: PostgresServer, db: str, warehouse: Path) -> None:
    """Declare Spark catalog ``name`` on database ``db`` (settings read at its first use)."""
    prefix = f"spark.sql.catalog.{name}"
    for key, value in {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "jdbc",
        f"{prefix}.uri": server.jdbc_uri(db),
        f"{prefix}.jdbc.user": "postgres",
        f"{prefix}.jdbc.password": server.password,
        f"{prefix}.jdbc.schema-version": "V1",
        f"{prefix}.warehouse": str(warehouse),
        f"{prefix}.cache-enabled": "false",  # iceduck commits too: re-read on every statement
    }.items():
        spark.conf.set(key, value)


def _require_driver(spark: SparkSession) -> None:
    if not JDBC_JAR.is_file():
        pytest.skip(f"{JDBC_JAR} is missing: apt-get install -y libpostgresql-jdbc-java")
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        jvm.java.lang.Class.forName("org.postgresql.Driver")
    except Exception as e:  # the session started before the jar was installed
        pytest.skip(f"the PostgreSQL JDBC driver is not on the running Spark's class path: {e}")


@pytest.fixture(scope="module")
def shared(
    spark: SparkSession, postgres_server: PostgresServer, postgres_database: str, tmp_path_factory: Any
) -> Iterator[tuple[SparkSession, Session]]:
    """Spark's catalog ``pg`` and an iceduck session on the same database and warehouse."""
    _require_driver(spark)
    warehouse = tmp_path_factory.mktemp("pg-warehouse")
    catalog = PostgresCatalog(postgres_database, str(warehouse), CATALOG)  # creates the layout
    _spark_catalog(spark, CATALOG, postgres_server, postgres_database.rsplit("/", 1)[1], warehouse)
    session = Session(warehouse, catalog_impl=catalog)
    yield spark, session
    session.close()


def _layout(uri: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(uri) as conn:
        return conn.execute(
            "SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, "
            "ordinal_position FROM information_schema.columns WHERE table_schema = 'public' "
            "ORDER BY table_name, ordinal_position"
        ).fetchall()


def test_the_layout_spark_creates_is_iceducks(
    spark: SparkSession, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    _require_driver(spark)
    by_spark = postgres_server.create_database("created_by_spark")
    by_iceduck = postgres_server.create_database("created_by_iceduck")
    _spark_catalog(spark, "pgnew", postgres_server, "created_by_spark", tmp_path)
    spark.sql("CREATE NAMESPACE pgnew.made")  # the first use: Spark creates the tables
    PostgresCatalog(by_iceduck, str(tmp_path), "pgnew").close()
    assert _layout(by_spark) == _layout(by_iceduck)
    assert len(_layout(by_spark)) == 10
    catalog = PostgresCatalog(by_spark, str(tmp_path), "pgnew", read_only=True)
    assert catalog.list_namespaces() == [("made",)]
    assert catalog.load_namespace_properties(("made",))["location"] == f"{tmp_path}/made"
    catalog.close()


def _both(spark: SparkSession, session: Session, table: str) -> list[tuple[Any, ...]]:
    """The table's rows read by Spark and by iceduck, which must be equal."""
    by_spark = [tuple(r) for r in spark.sql(f"SELECT * FROM {CATALOG}.{table} ORDER BY id").collect()]
    by_iceduck = session.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
    assert by_iceduck == by_spark
    return by_iceduck


def test_alternating_writes_read_the_same_both_ways(shared: tuple[SparkSession, Session]) -> None:
    spark, session = shared
    spark.sql(f"CREATE NAMESPACE {CATALOG}.shop")
    spark.sql(
        f"CREATE TABLE {CATALOG}.shop.orders (id bigint, who string, amount decimal(10,2)) USING iceberg "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read', "
        "'write.update.mode' = 'merge-on-read')"
    )
    spark.sql(f"INSERT INTO {CATALOG}.shop.orders SELECT id, concat('c', id % 3), id * 1.5 FROM range(10)")
    assert len(_both(spark, session, "shop.orders")) == 10
    session.execute("DELETE FROM shop.orders WHERE id < 3")
    assert [r[0] for r in _both(spark, session, "shop.orders")] == list(range(3, 10))
    spark.sql(f"UPDATE {CATALOG}.shop.orders SET who = 'spark' WHERE id = 5")
    session.execute("INSERT INTO shop.orders VALUES (100, 'iceduck', 1.25)")
    session.execute("UPDATE shop.orders SET amount = 0 WHERE id = 9")
    spark.sql(f"DELETE FROM {CATALOG}.shop.orders WHERE id = 4")
    rows = _both(spark, session, "shop.orders")
    assert [r[0] for r in rows] == [3, 5, 6, 7, 8, 9, 100]
    assert rows[1][1] == "spark" and rows[-1][1] == "iceduck" and float(rows[-2][2]) == 0
    history = spark.sql(f"SELECT count(*) FROM {CATALOG}.shop.orders.snapshots").collect()[0][0]
    assert session.execute("SELECT count(*) FROM shop.orders.snapshots").fetchall() == [(history,)]
    assert history == 6

    # a table iceduck creates, Spark writes and iceduck reads back
    session.execute("CREATE TABLE shop.made (id bigint, note string) TBLPROPERTIES ('format-version' = '2')")
    session.execute("INSERT INTO shop.made VALUES (1, 'iceduck')")
    spark.sql(f"INSERT INTO {CATALOG}.shop.made VALUES (2, 'spark')")
    spark.sql(f"DELETE FROM {CATALOG}.shop.made WHERE id = 1")
    assert _both(spark, session, "shop.made") == [(2, "spark")]
    tables = {r["tableName"] for r in spark.sql(f"SHOW TABLES IN {CATALOG}.shop").collect()}
    assert tables == {"orders", "made"}


def test_concurrent_commits_from_spark_and_iceduck_are_all_kept(shared: tuple[SparkSession, Session]) -> None:
    """Spark and iceduck append to one table at the same moment; the catalog's compare-and-swap
    makes each loser retry on fresh metadata, so every committed batch is in the table."""
    spark, session = shared
    session.execute("CREATE NAMESPACE IF NOT EXISTS race")
    session.execute(
        "CREATE TABLE race.t (id bigint, who string) TBLPROPERTIES ('format-version' = '2', "
        "'commit.retry.num-retries' = '50', 'commit.retry.min-wait-ms' = '10', "
        "'commit.retry.max-wait-ms' = '500')"
    )
    spark_batches = 6
    done = race(
        lambda i: spark.sql(f"INSERT INTO {CATALOG}.race.t VALUES ({i}, 'spark')"),
        lambda i: session.execute(f"INSERT INTO race.t VALUES ({i}, 'iceduck')"),
        spark_batches,
        12,
    )
    expected = [(b, "iceduck") for b in range(done)]
    expected += [(SPARK_IDS + b, "spark") for b in range(spark_batches)]
    assert _both(spark, session, "race.t") == expected
    # the commits interleaved: a Spark commit lies between two of iceduck's
    history = (
        f"SELECT summary['spark.app.id'] IS NOT NULL FROM {CATALOG}.race.t.snapshots ORDER BY committed_at"
    )
    by_spark = [r[0] for r in spark.sql(history).collect()]
    first_spark = by_spark.index(True)
    assert not all(by_spark[first_spark:]), by_spark
    snapshots = session.execute("SELECT count(*) FROM race.t.snapshots").fetchall()
    assert snapshots == [(spark_batches + done,)]
