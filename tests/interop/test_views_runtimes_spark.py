"""Views shared with the first and the newest Iceberg Spark runtimes that keep views in the
JDBC catalog (1.7 and 1.12), beside the reference 1.10 of tests/interop/test_views_spark.py.

Each runtime runs in a Spark of its own (:class:`tests.support.spark_peer.SparkPeer`, the
runtime from Maven Central) with Iceberg's JDBC catalog on a SQLite ``catalog.db`` laid out
by iceduck, in a fresh warehouse: a view that runtime creates (Spark-only functions) reads
the same in iceduck, before and after the runtime replaces it, and a view iceduck creates
reads the same in that runtime.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.spark import jars as spark_jars
from iceduck.spark.conf import spark_conf
from tests.support import maven
from tests.support.scenario_rows import iceduck_rows
from tests.support.spark_peer import SparkPeer

pytestmark = [pytest.mark.spark, pytest.mark.old_runtimes]

CATALOG = "iceduck"
RUNTIMES = ["1.7.1", "1.12.0"]


@pytest.fixture(scope="module", params=RUNTIMES)
def peer(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[SparkPeer, Path]]:
    """A Spark with one runtime on a fresh warehouse's JDBC catalog, and the warehouse."""
    try:
        runtime = maven.iceberg_runtime(request.param)
    except maven.MavenUnavailable as e:
        if os.environ.get("ICEDUCK_REQUIRE_MAVEN"):
            raise
        pytest.skip(f"the Iceberg {request.param} runtime is not available: {e}")
    warehouse = tmp_path_factory.mktemp(f"views-{request.param}") / "wh"
    with iceduck.connect(warehouse, CATALOG) as con:  # catalog.db as Java lays it out
        con.execute("CREATE NAMESPACE ns")
        con.execute(
            "CREATE TABLE ns.orders AS SELECT * FROM (VALUES (1, 'ann', DATE '2024-01-01'), "
            "(2, NULL, DATE '2024-02-29'), (3, 'ann', NULL)) AS v(id, who, day)"
        )
    sqlite_jar, options = spark_jars.sqlite_jdbc_jar()
    classpath = os.pathsep.join(str(jar) for jar in (runtime, sqlite_jar))
    settings = {
        **spark_conf(warehouse, CATALOG),
        "spark.driver.extraClassPath": classpath,  # DriverManager finds drivers on the system class path
        "spark.driver.extraJavaOptions": f"{options} -Duser.timezone=UTC".strip(),
    }
    spark = SparkPeer([runtime], settings, tmp_path_factory.mktemp(f"scratch-{request.param}"))
    try:
        yield spark, warehouse
    finally:
        spark.close()


def test_views_cross_both_ways_with_the_runtime(peer: tuple[SparkPeer, Path]) -> None:
    spark, warehouse = peer
    spark.sql(f"USE {CATALOG}.ns")
    spark.sql(
        "CREATE VIEW s_v AS SELECT nvl(who, 'anon') AS who, count(*) AS n, "
        "sort_array(collect_list(id)) AS ids, max(date_add(day, 1)) AS after FROM orders GROUP BY who"
    )
    with iceduck.connect(warehouse, CATALOG) as con:
        assert iceduck_rows(con, "SELECT * FROM ns.s_v") == spark.rows(f"SELECT * FROM {CATALOG}.ns.s_v")
        con.execute("CREATE VIEW ns.d_v AS SELECT id, coalesce(who, '?') || '!' AS shout FROM ns.orders")
        assert spark.rows(f"SELECT * FROM {CATALOG}.ns.d_v") == iceduck_rows(con, "SELECT * FROM ns.d_v")
        spark.sql("CREATE OR REPLACE VIEW s_v AS SELECT id FROM orders WHERE day IS NULL")
        assert iceduck_rows(con, "SELECT * FROM ns.s_v") == (["id"], [(("number", "3"),)])
